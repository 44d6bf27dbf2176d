"""`ace mcp` keeps the vectors of tasks it has matched: an agent asking about the same task again is
answered with the same skills without the task being embedded again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matching.fixture_skills import CountingEmbedder
from mcp.types import TextContent
from mcp_session import write_skillbook

from ace.cli import main
from ace.errors import UsageError
from ace.mcp import create_server
from ace.retrieval import default_embedder

TASK = "etl-worker is in CrashLoopBackOff and `kubectl logs` returns nothing"


async def _match_twice(skillbook: Path, task_cache_entries: int) -> tuple[list[str], int]:
    embedder = CountingEmbedder(default_embedder())
    server = create_server(skillbook, embedder=embedder, task_cache_entries=task_cache_entries)
    answers = []
    for task in (TASK, f"  {TASK}\n"):
        [content] = await server.call_tool("match_skills", {"task": task})
        assert isinstance(content, TextContent)
        answers.append(content.text)
    embedded_task = sum(batch.count(TASK) for batch in embedder.calls)
    return answers, embedded_task


async def test_a_repeated_task_is_embedded_once_and_answered_the_same(tmp_path: Path) -> None:
    skillbook = write_skillbook(tmp_path)

    cached, embedded_with_cache = await _match_twice(skillbook, task_cache_entries=16)
    plain, embedded_without = await _match_twice(skillbook, task_cache_entries=0)

    assert [match["id"] for match in json.loads(cached[0])] == ["context-00001"]
    assert cached == plain and cached[0] == cached[1]
    assert (embedded_with_cache, embedded_without) == (1, 2)


def test_a_negative_cache_size_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="task_cache_entries must be an integer >= 0"):
        create_server(write_skillbook(tmp_path), task_cache_entries=-1)


def test_ace_mcp_refuses_a_negative_task_cache_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", str(write_skillbook(tmp_path)), "--task-cache", "-1"]) == 2
    assert "--task-cache must be 0 (no cache) or more task vectors, got -1" in capsys.readouterr().err
