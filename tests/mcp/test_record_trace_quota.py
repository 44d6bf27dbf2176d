"""`ace mcp record_trace` under attack (issue 23, class 11): a client recording in a loop fills the
queue up to its quota, then every further trace is a tool error and nothing more is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.types import TextContent
from mcp_session import stdio_session, write_skillbook

from ace.cli import main
from ace.mcp import TraceQueueFullError, TraceQuota, record_trace

TRANSCRIPT = "user: the rates report shows 0 everywhere\nassistant: cast to numeric before dividing"


def queued(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


async def test_a_client_recording_in_a_loop_is_refused_at_the_trace_quota(tmp_path: Path) -> None:
    skillbook = write_skillbook(tmp_path)
    async with stdio_session(str(skillbook), "--max-queued-traces", "5") as session:
        results = [
            await session.call_tool("record_trace", {"task": f"task {n}", "transcript": TRANSCRIPT, "outcome": "fixed"})
            for n in range(8)
        ]

    assert [result.isError for result in results] == [False] * 5 + [True] * 3
    [message] = results[-1].content
    assert isinstance(message, TextContent) and "trace queue" in message.text and "is full" in message.text
    assert "5 traces" in message.text and "--max-queued-traces" in message.text
    assert len(queued(tmp_path / "team.traces")) == 5


async def test_a_client_sending_large_traces_is_refused_at_the_byte_quota(tmp_path: Path) -> None:
    skillbook = write_skillbook(tmp_path)
    long_transcript = "assistant: " + "retry the request " * 5_000  # about 90 KB of JSON per trace
    async with stdio_session(str(skillbook), "--max-queued-bytes", "300000") as session:
        results = [
            await session.call_tool("record_trace", {"task": "t", "transcript": long_transcript, "outcome": "gave up"})
            for _ in range(5)
        ]

    assert [result.isError for result in results] == [False] * 3 + [True] * 2
    assert sum(path.stat().st_size for path in queued(tmp_path / "team.traces")) <= 300_000


def test_recording_works_again_once_the_queue_is_emptied(tmp_path: Path) -> None:
    quota = TraceQuota(max_traces=2)
    first = record_trace(tmp_path, "a", TRANSCRIPT, "ok", quota=quota)
    record_trace(tmp_path, "b", TRANSCRIPT, "ok", quota=quota)
    with pytest.raises(TraceQueueFullError, match="holds 2 traces"):
        record_trace(tmp_path, "c", TRANSCRIPT, "ok", quota=quota)

    first.unlink()  # learned from and removed

    assert record_trace(tmp_path, "c", TRANSCRIPT, "ok", quota=quota).exists()
    assert len(queued(tmp_path)) == 2


def test_the_default_quota_is_documented_in_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["mcp", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--max-queued-traces N" in help_text and "(default 10000)" in help_text
    assert f"(default {TraceQuota().max_bytes}, 512 MiB)" in help_text


def test_a_quota_below_one_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", str(write_skillbook(tmp_path)), "--max-queued-traces", "0"]) == 2
    assert "--max-queued-traces must be at least 1" in capsys.readouterr().err
