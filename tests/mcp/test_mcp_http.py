"""`ace mcp --http`: the SDK's streamable HTTP client reaches the same tools on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from mcp_session import ACE, READ_TIMEOUT, TIMEOUT, server_environment, write_skillbook


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"ace mcp --http exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"ace mcp --http did not listen on port {port}")


async def test_http_transport_serves_the_tools_on_loopback(tmp_path: Path) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", ACE, "mcp", str(write_skillbook(tmp_path)), "--http", "--port", str(port)],
        env=server_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, process, time.monotonic() + TIMEOUT)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, _session_id):
            async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT) as session:
                await session.initialize()
                tools = {tool.name for tool in (await session.list_tools()).tools}
                result = await session.call_tool("read_skill", {"id": "context-00001"})
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert "match_skills" in tools
    [block] = result.content
    assert isinstance(block, TextContent) and json.loads(block.text)["id"] == "context-00001"


def test_a_malformed_skillbook_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"version": 2, "skills": [', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", ACE, "mcp", str(path)],
        env=server_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("ace: error: ") and done.stderr.count("\n") == 1, done.stderr
