"""A session emits `{label}.session`, children `{label}.child`, and pydantic-ai tool-call spans."""

from __future__ import annotations

from logfire.testing import CaptureLogfire
from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.agentic import AgenticConfig, RecursiveAgent


def ping(ctx: RunContext[None]) -> str:
    """Do one step of work."""
    return "pong"


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    is_child = any(p.part_kind == "user-prompt" and p.content == "sub-task" for p in first.parts)
    returned = {p.tool_name for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
    if is_child:
        return ModelResponse(parts=[ToolCallPart("ping", {})] if not returned else [TextPart("child done")])
    if "recurse" not in returned:
        return ModelResponse(parts=[ToolCallPart("recurse", {"task": "sub-task"})])
    return ModelResponse(parts=[TextPart("parent done")])


async def test_session_child_and_tool_call_spans_are_recorded(capfire: CaptureLogfire):
    agent = RecursiveAgent(
        FunctionModel(model),
        instructions="Work.",
        deps_type=type(None),
        tools=[ping],
        config=AgenticConfig(max_depth=1),
        span_label="sm",
    )
    await agent.run("go", deps=None)
    spans = capfire.exporter.exported_spans_as_dict()
    names = [span["name"] for span in spans]
    assert names.count("sm.session") == 1
    assert names.count("sm.child") == 1
    tool_spans = [span for span in spans if span["attributes"].get("gen_ai.tool.name") in {"ping", "recurse"}]
    assert {span["attributes"]["gen_ai.tool.name"] for span in tool_spans} == {"ping", "recurse"}
    child = next(span for span in spans if span["name"] == "sm.child")
    session = next(span for span in spans if span["name"] == "sm.session")
    assert child["context"]["trace_id"] == session["context"]["trace_id"]


async def test_instrument_false_leaves_only_the_session_spans(capfire: CaptureLogfire):
    agent = RecursiveAgent(
        FunctionModel(model),
        instructions="Work.",
        deps_type=type(None),
        tools=[ping],
        config=AgenticConfig(max_depth=1),
        span_label="rr",
        instrument=False,
    )
    await agent.run("go", deps=None)
    names = {span["name"] for span in capfire.exporter.exported_spans_as_dict()}
    assert names == {"rr.session", "rr.child"}
