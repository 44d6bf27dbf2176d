"""The code in docs/agentic.md runs as written (offline: litellm mock_response, FunctionModel, a sandbox)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "agentic.md"


def test_the_python_blocks_of_the_agentic_page_run_in_order() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 3
    namespace: dict[str, object] = {"__name__": "agentic_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
