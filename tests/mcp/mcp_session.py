"""A small skillbook file, and an MCP client session from the SDK against `ace mcp` over stdio.

Not a package and not a conftest: `tests/mcp/__init__.py` would make this folder the `mcp` package
and shadow the SDK. The SDK is 1.x (the `eval` extra's tau3 package pins `mcp<2`); `.[dev]` installs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ace.skillbook import Skillbook

ACE = "import sys; from ace.cli import main; sys.exit(main())"
"""The `ace` command, run by this interpreter (the console script may not be on PATH)."""
TIMEOUT = 60.0
"""Seconds any one request may take (the first match loads the offline embedder: a few seconds)."""
READ_TIMEOUT = timedelta(seconds=TIMEOUT)
"""`TIMEOUT` as the SDK's `ClientSession` takes it."""


def write_skillbook(tmp_path: Path) -> Path:
    """Two skills (the docs/matching.md example) saved as `tmp_path/team.json`."""
    skillbook = Skillbook()
    skillbook.add_skill(
        "context",
        "For pods in CrashLoopBackOff, kubectl logs shows the freshly restarted container, which often "
        "has no output yet, so the actual crash message appears to be missing.",
        ["k8s", "pod_debugging", "crashloopbackoff"],
        insight="Read the previous container's output with kubectl logs --previous.",
    )
    skillbook.add_skill(
        "context",
        "In Postgres and SQLite, dividing one integer column by another performs integer division, so "
        "rates come out as 0.",
        ["sql", "integer_division"],
        insight="Cast one operand to numeric before dividing.",
    )
    path = tmp_path / "team.json"
    skillbook.save_to_file(path)
    return path


def server_environment() -> dict[str, str]:
    """The test's environment (PYTHONPATH, HOME for the model cache), as the SDK passes only a few."""
    return {key: value for key, value in os.environ.items() if key != "LOGFIRE_TOKEN"}


def server_parameters(*args: str) -> StdioServerParameters:
    """How the SDK's stdio client starts `ace mcp *args`."""
    return StdioServerParameters(command=sys.executable, args=["-c", ACE, "mcp", *args], env=server_environment())


@asynccontextmanager
async def stdio_session(*args: str) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session with `ace mcp *args` over stdio."""
    with open(os.devnull, "w") as errlog:
        async with stdio_client(server_parameters(*args), errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT) as session:
                await session.initialize()
                yield session
