"""`ace mcp` over stdio, driven by the SDK's own client: tools, resources, errors, the trace queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="ace mcp needs the mcp SDK 2.x (pip install 'ace[mcp]')")

from mcp_session import stdio_session, write_skillbook  # noqa: E402
from mcp_types import TextContent, TextResourceContents  # noqa: E402

from ace.steps._trace_fields import trace_feedback  # noqa: E402
from ace.steps.load_traces import load_trace_file, trace_locations  # noqa: E402


@pytest.fixture
def skillbook_path(tmp_path: Path) -> Path:
    return write_skillbook(tmp_path)


def _text(result: object) -> str:
    [block] = result.content  # type: ignore[attr-defined]
    assert isinstance(block, TextContent)
    return block.text


async def test_the_server_lists_its_four_tools_and_the_catalog_resource(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
    assert tools == {"match_skills", "search_skills", "read_skill", "record_trace"}
    assert resources == {"skillbook://catalog"}
    assert templates == {"skillbook://skills/{skill_id}"}


async def test_match_skills_returns_the_skill_that_applies_and_an_empty_list_otherwise(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        hit = await session.call_tool(
            "match_skills", {"task": "etl-worker is in CrashLoopBackOff and `kubectl logs` returns nothing"}
        )
        miss = await session.call_tool("match_skills", {"task": "Write a haiku about autumn leaves."})
    assert not hit.is_error and not miss.is_error
    [match] = json.loads(_text(hit))
    assert match["id"] == "context-00001"
    assert set(match) == {"id", "score", "matched_on", "section", "keywords", "issue"}
    assert match["score"] >= 0.5 and match["matched_on"] in ("issue", "keywords")
    assert json.loads(_text(miss)) == []


async def test_read_skill_gives_the_insight_and_counters_and_the_resource_the_same(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        result = await session.call_tool("read_skill", {"id": "context-00002"})
        resource = await session.read_resource("skillbook://skills/context-00002")
        catalog = await session.read_resource("skillbook://catalog")
    skill = json.loads(_text(result))
    assert skill["insight"] == "Cast one operand to numeric before dividing."
    assert {"used_count", "helpful_count", "harmful_count", "occurrences"} <= set(skill)
    [contents] = resource.contents
    assert isinstance(contents, TextResourceContents) and json.loads(contents.text) == skill
    [listing] = catalog.contents
    assert isinstance(listing, TextResourceContents)
    assert [entry["id"] for entry in json.loads(listing.text)] == ["context-00001", "context-00002"]


async def test_an_unknown_id_and_a_blank_task_are_tool_errors_with_a_clear_message(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        unknown = await session.call_tool("read_skill", {"id": "context-09999"})
        blank = await session.call_tool("match_skills", {"task": "   "})
    assert unknown.is_error and "no active skill with id 'context-09999'" in _text(unknown)
    assert blank.is_error and "task is blank" in _text(blank)
    assert "Traceback" not in _text(unknown) + _text(blank)


async def test_search_skills_filters_by_section_and_keywords(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        found = await session.call_tool("search_skills", {"query": "integer division rates are zero", "top_k": 1})
        filtered = await session.call_tool(
            "search_skills", {"query": "integer division", "keywords": ["k8s"], "section": "context"}
        )
    [first] = json.loads(_text(found))
    assert first["id"] == "context-00002" and first["insight"].startswith("Cast one operand")
    assert [s["id"] for s in json.loads(_text(filtered))] == ["context-00001"]


async def test_record_trace_queues_a_file_the_trace_loader_reads(skillbook_path: Path) -> None:
    messages = [{"role": "user", "content": "rates are all 0"}, {"role": "assistant", "content": "cast to numeric"}]
    async with stdio_session(str(skillbook_path)) as session:
        result = await session.call_tool(
            "record_trace", {"task": "fix the rates report", "transcript": messages, "outcome": "report fixed"}
        )
        text = await session.call_tool(
            "record_trace", {"task": "fix the rates report", "transcript": "user: hi", "outcome": "gave up"}
        )
    assert not result.is_error and not text.is_error
    written = Path(json.loads(_text(result))["recorded"])
    assert written.parent == skillbook_path.with_name("team.traces")
    [trace] = load_trace_file(written)
    assert trace["question"] == "fix the rates report" and trace["messages"] == messages
    assert trace_feedback(trace) == "report fixed" and trace["source_system"] == "mcp"
    assert len(trace_locations([written.parent])) == 2


async def test_record_trace_refuses_a_transcript_without_roles(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        result = await session.call_tool(
            "record_trace", {"task": "t", "transcript": [{"content": "no role"}], "outcome": "ok"}
        )
    assert result.is_error and "has no string \"role\"" in _text(result)
    assert not skillbook_path.with_name("team.traces").exists()
