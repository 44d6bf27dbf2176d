"""The top-level `ace` package: every advertised name resolves, lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ace


@pytest.mark.parametrize("name", [n for n in ace.__all__ if n != "__version__"])
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(ace, name).__name__ == name


def test_unknown_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        ace.Nope  # noqa: B018


def test_importing_ace_does_not_import_the_llm_stack() -> None:
    code = "import sys, ace; print('pydantic_ai' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
