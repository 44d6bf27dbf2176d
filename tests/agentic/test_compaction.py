"""Compaction fires when the history estimate exceeds the context budget: placeholders first, then a summary."""

from __future__ import annotations

from logfire.testing import CaptureLogfire
from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.agentic import AgenticConfig, RecursiveAgent, estimate_tokens
from ace.agentic._compaction import PLACEHOLDER_PREFIX, SUMMARY_PREFIX, render_messages

BIG = "x" * 2000  # about 500 estimated tokens


def fetch(ctx: RunContext[list[str]], page: int) -> str:
    """Fetch a page of data."""
    return ctx.deps[page]


class RecordingModel:
    """Calls fetch(0), fetch(1), fetch(2) then answers; records the history of every request."""

    def __init__(self) -> None:
        self.requests: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        step = len(self.requests) - 1
        if step < 3:
            return ModelResponse(parts=[ToolCallPart("fetch", {"page": step})])
        return ModelResponse(parts=[TextPart("done")])


class RecordingSummariser:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.prompts.append(render_messages(messages))
        return ModelResponse(parts=[TextPart("SUMMARY: fetched pages 0 and 1")])


def _agent(model: RecordingModel, summariser: RecordingSummariser, keep_recent: int) -> RecursiveAgent[list[str], str]:
    config = AgenticConfig(context_budget_tokens=300, keep_recent_messages=keep_recent, max_depth=0)
    return RecursiveAgent(
        FunctionModel(model),
        instructions="Read the pages.",
        deps_type=list,
        tools=[fetch],
        config=config,
        summary_model=FunctionModel(summariser),
    )


def _text(messages: list[ModelMessage]) -> str:
    return render_messages(messages)


async def test_old_tool_returns_are_replaced_by_a_placeholder_when_over_budget():
    model, summariser = RecordingModel(), RecordingSummariser()
    run = await _agent(model, summariser, keep_recent=1).run("read", deps=[BIG, "small", "small"])
    assert run.output == "done"
    assert BIG in _text(model.requests[1])  # under budget: untouched
    third = _text(model.requests[2])
    assert BIG not in third and PLACEHOLDER_PREFIX in third
    assert summariser.prompts == []  # placeholders were enough
    assert estimate_tokens(model.requests[2]) <= 300


async def test_history_still_over_budget_after_placeholders_is_summarised_by_the_summary_model(
    capfire: CaptureLogfire,
):
    model, summariser = RecordingModel(), RecordingSummariser()
    run = await _agent(model, summariser, keep_recent=2).run("read the pages", deps=[BIG, BIG, BIG])
    assert run.output == "done"
    assert len(summariser.prompts) >= 1 and "fetch(" in summariser.prompts[0]
    third = _text(model.requests[2])
    assert SUMMARY_PREFIX in third and "SUMMARY: fetched pages 0 and 1" in third
    assert "read the pages" in third  # the task survives compaction
    assert third.count(BIG) == 1  # the latest tool return is inside the untouched recent window
    assert len(model.requests[2]) < len(model.requests[1]) + 2  # old messages were folded away
    assert run.usage.requests == 4 + len(summariser.prompts)  # summary calls count against the session
    stages = [
        span["attributes"].get("stage")
        for span in capfire.exporter.exported_spans_as_dict()
        if span["name"] == "agent.compaction"
    ]
    assert "summary" in stages


async def test_history_over_budget_inside_the_recent_window_is_reported_not_labelled_summarised(
    capfire: CaptureLogfire,
):
    # keep_recent covers the whole history: nothing can be elided or summarised.
    model, summariser = RecordingModel(), RecordingSummariser()
    run = await _agent(model, summariser, keep_recent=50).run("read the pages", deps=[BIG, BIG, BIG])
    assert run.output == "done"
    assert summariser.prompts == []
    compactions = [
        span["attributes"] for span in capfire.exporter.exported_spans_as_dict() if span["name"] == "agent.compaction"
    ]
    assert compactions and all(a["stage"] == "tool_returns" and a["over_budget_after"] for a in compactions)


class LongRecordingModel(RecordingModel):
    """Like RecordingModel, but fetches six pages before answering."""

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        step = len(self.requests) - 1
        if step < 6:
            return ModelResponse(parts=[ToolCallPart("fetch", {"page": step})])
        return ModelResponse(parts=[TextPart("done")])


async def test_repeated_compaction_folds_the_earlier_summary_into_one():
    model, summariser = LongRecordingModel(), RecordingSummariser()
    run = await _agent(model, summariser, keep_recent=2).run("read the pages", deps=[BIG] * 6)

    assert run.output == "done"
    assert len(summariser.prompts) >= 2
    assert SUMMARY_PREFIX in summariser.prompts[-1]  # the later summary was given the earlier one
    last = model.requests[-1]
    assert _text(last[:1]).count(SUMMARY_PREFIX) == 1
    assert "read the pages" in _text(last[:1])
