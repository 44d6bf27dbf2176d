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


def test_all_lists_exactly_the_lazily_exported_names() -> None:
    assert sorted(ace.__all__) == sorted(["__version__", *ace._EXPORTS])


def test_the_cli_frame_is_public_and_ace_eval_uses_only_public_names() -> None:
    import pathlib

    from ace.cli import Command, CommandError, build_parser, run_cli  # noqa: F401

    root = pathlib.Path(__file__).resolve().parents[1] / "ace_eval"
    private = [str(path) for path in root.rglob("*.py") if "ace.cli._" in path.read_text(encoding="utf-8")]
    assert private == []


def test_ace_roles_exports_resolve_lazily_from_the_modules_it_names() -> None:
    import ace.roles

    assert sorted(ace.roles.__all__) == sorted(ace.roles._EXPORTS)
    for name, module in ace.roles._EXPORTS.items():
        assert getattr(ace.roles, name) is getattr(__import__(module, fromlist=[name]), name)


def test_the_injection_policies_load_without_the_llm_stack() -> None:
    code = "import sys; from ace.roles import SKILL_INJECTIONS; print(SKILL_INJECTIONS, 'pydantic_ai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "('matched', 'all', 'tool') False\n"
