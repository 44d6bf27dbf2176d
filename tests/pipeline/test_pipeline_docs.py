"""The code in docs/pipeline.md runs as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "pipeline.md"


def test_the_python_blocks_of_the_pipeline_page_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 5
    module = types.ModuleType("pipeline_doc")  # dataclasses look their module up in sys.modules
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), module.__dict__)
