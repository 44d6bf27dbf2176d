"""`ace mcp` over stdio, driven by the SDK's own client: tools, resources, errors, the trace queue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.types import TextContent, TextResourceContents
from mcp_session import READ_TIMEOUT, server_parameters, stdio_session, write_skillbook

from ace import __version__
from ace.traces import load_trace_file, trace_feedback, trace_locations


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
        templates = {t.uriTemplate for t in (await session.list_resource_templates()).resourceTemplates}
    assert tools == {"match_skills", "search_skills", "read_skill", "record_trace"}
    assert resources == {"skillbook://catalog"}
    assert templates == {"skillbook://skills/{skill_id}"}


async def test_the_server_names_itself_with_the_ace_version(skillbook_path: Path) -> None:
    with open(os.devnull, "w") as errlog:
        async with stdio_client(server_parameters(str(skillbook_path)), errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT) as session:
                info = (await session.initialize()).serverInfo
    assert (info.name, info.version) == ("ace-skillbook", __version__)


async def test_match_skills_returns_the_skill_that_applies_and_an_empty_list_otherwise(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        hit = await session.call_tool(
            "match_skills", {"task": "etl-worker is in CrashLoopBackOff and `kubectl logs` returns nothing"}
        )
        miss = await session.call_tool("match_skills", {"task": "Write a haiku about autumn leaves."})
    assert not hit.isError and not miss.isError
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
    assert unknown.isError and "no active skill with id 'context-09999'" in _text(unknown)
    assert blank.isError and "task is blank" in _text(blank)
    assert "Traceback" not in _text(unknown) + _text(blank)


async def test_an_unknown_skill_resource_is_an_error_naming_the_id(skillbook_path: Path) -> None:
    async with stdio_session(str(skillbook_path)) as session:
        with pytest.raises(McpError, match="no active skill with id 'context-09999'") as raised:
            await session.read_resource("skillbook://skills/context-09999")
    assert raised.value.error.message.startswith("no active skill with id 'context-09999'")


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
    assert not result.isError and not text.isError
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
    assert result.isError and 'has no string "role"' in _text(result)
    assert not skillbook_path.with_name("team.traces").exists()


def test_the_server_module_imports_without_fastapi() -> None:
    # `ace mcp` needs only the mcp extra: the file-following state it shares with `ace serve`
    # (ace.serving) must not pull in the FastAPI app.
    probe = "import sys, ace.mcp; print('fastapi' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
