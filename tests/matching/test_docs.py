"""The Python blocks of docs/matching.md run as written, in order, sharing one namespace."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "matching.md"


def test_the_python_blocks_of_the_matching_page_run_in_order(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)

    assert len(blocks) == 2
    skill_id, score, matched_on = capsys.readouterr().out.split()
    assert (skill_id, matched_on) == ("context-00001", "issue")
    assert float(score) >= 0.5
