"""The Python blocks of docs/retrieval.md and docs/matching.md run as written (each page in order,
in one namespace) and print what their comments say. Blocks fenced as `py` rather than `python`
need a running server and are not run."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _run_python_blocks(page: str) -> int:
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.DOTALL)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOCS / page), "exec"), namespace)
    return len(blocks)


def test_the_python_blocks_of_the_retrieval_page_run_in_order(capsys) -> None:
    assert _run_python_blocks("retrieval.md") == 3
    first_line = capsys.readouterr().out.splitlines()[0]
    assert first_line.startswith("context-00001 Passengers ask to move a flight reservation")


def test_the_python_blocks_of_the_matching_page_run_in_order(capsys) -> None:
    assert _run_python_blocks("matching.md") == 3
    skill_id, score, matched_on = capsys.readouterr().out.split()
    assert (skill_id, matched_on) == ("context-00001", "issue")
    assert float(score) >= 0.5
