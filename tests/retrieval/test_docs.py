"""The Python blocks of docs/retrieval.md run as written, in order, sharing one namespace."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "retrieval.md"


def test_the_python_blocks_of_the_retrieval_page_run_in_order(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)

    assert len(blocks) == 3
    first_line = capsys.readouterr().out.splitlines()[0]
    assert first_line.startswith("context-00001 Passengers ask to move a flight reservation")
