"""The code in docs/roles.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "roles.md"


def test_the_python_blocks_of_the_roles_page_run_in_order() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 5
    namespace: dict[str, object] = {"__name__": "roles_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
