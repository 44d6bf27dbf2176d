"""The Python examples in docs/skillbook.md run (in order, sharing one namespace) and stay true."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "skillbook.md"


def test_docs_examples_run(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    assert len(blocks) >= 6


def test_docs_prompt_output_matches_as_prompt(capsys) -> None:
    text = DOC.read_text()
    first_block = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL).group(1)
    exec(compile(first_block, str(DOC), "exec"), {})
    printed = capsys.readouterr().out
    shown = re.search(r"prints\n\n```\n(.*?)```", text, flags=re.DOTALL).group(1)
    assert printed == shown
