"""The code in docs/agentic.md runs as written (offline: litellm mock_response, FunctionModel, a sandbox)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "agentic.md"


def test_the_python_blocks_of_the_agentic_page_run_in_order() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 4
    # A fresh interpreter: the page's litellm call leaves litellm's logging worker bound to its event
    # loop, which would surface as an unraisable-exception warning in whichever test runs next.
    completed = subprocess.run(
        [sys.executable, "-c", "\n\n".join(blocks)], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
