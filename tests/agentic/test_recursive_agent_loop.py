"""RecursiveAgent runs a real pydantic-ai tool loop: typed deps, ModelRetry, ToolOutput finalize, single pass."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from pydantic import BaseModel
from pydantic_ai import ModelRetry, RunContext, ToolOutput
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.agentic import AgenticConfig, RecursiveAgent


class Finalize(BaseModel):
    reasoning: str


@dataclass
class Notebook:
    entries: list[str] = field(default_factory=list)


def write(ctx: RunContext[Notebook], text: str) -> str:
    """Append a line to the notebook."""
    if not text.strip():
        raise ModelRetry("text must not be empty; pass the line to write")
    ctx.deps.entries.append(text)
    return f"written ({len(ctx.deps.entries)} lines)"


def _responses(messages: list[ModelMessage]) -> int:
    return sum(isinstance(m, ModelResponse) for m in messages)


def _finalize_agent(
    model: FunctionModel, config: AgenticConfig = AgenticConfig()
) -> RecursiveAgent[Notebook, Finalize]:
    return RecursiveAgent(
        model,
        instructions="Keep notes.",
        deps_type=Notebook,
        output_type=ToolOutput(Finalize, name="finalize"),
        tools=[write],
        config=config,
    )


async def test_tool_mutates_typed_deps_and_text_output_ends_the_run():
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _responses(messages) == 0:
            return ModelResponse(parts=[ToolCallPart("write", {"text": "first"})])
        return ModelResponse(parts=[TextPart("noted")])

    notebook = Notebook()
    agent = RecursiveAgent(FunctionModel(model), instructions="Keep notes.", deps_type=Notebook, tools=[write])
    run = await agent.run("note something", deps=notebook)
    assert (run.output, run.finished, notebook.entries) == ("noted", True, ["first"])
    assert run.usage.requests == 2


async def test_model_retry_from_a_tool_reaches_the_model_and_the_corrected_call_succeeds():
    retry_messages: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = _responses(messages)
        if step == 0:
            return ModelResponse(parts=[ToolCallPart("write", {"text": "  "})])
        if step == 1:
            retry_messages.extend(str(getattr(p, "content", "")) for p in messages[-1].parts)
            return ModelResponse(parts=[ToolCallPart("write", {"text": "fixed"})])
        return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "done"})])

    notebook = Notebook()
    run = await _finalize_agent(FunctionModel(model)).run("go", deps=notebook)
    assert notebook.entries == ["fixed"]
    assert any("must not be empty" in text for text in retry_messages)
    assert run.output == Finalize(reasoning="done")


async def test_finalize_tool_output_ends_the_loop_and_tool_calls_in_the_same_response_still_run():
    requests = 0

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal requests
        requests += 1
        return ModelResponse(
            parts=[
                ToolCallPart("finalize", {"reasoning": "all done"}),
                ToolCallPart("write", {"text": "a"}),
                ToolCallPart("write", {"text": "b"}),
            ]
        )

    notebook = Notebook()
    run = await _finalize_agent(FunctionModel(model)).run("go", deps=notebook)
    assert run.output == Finalize(reasoning="all done")
    assert sorted(notebook.entries) == ["a", "b"]
    assert requests == 1


async def test_single_pass_executes_the_one_response_tool_calls_then_ends_unfinished():
    seen_instructions: list[str | None] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen_instructions.append(info.instructions)
        return ModelResponse(parts=[ToolCallPart("write", {"text": "a"}), ToolCallPart("write", {"text": "b"})])

    notebook = Notebook()
    run = await _finalize_agent(FunctionModel(model), AgenticConfig(max_requests=1)).run("go", deps=notebook)
    assert (run.finished, run.output) == (False, None)
    assert sorted(notebook.entries) == ["a", "b"]
    assert run.usage.requests == 1
    returns = [p for m in run.messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(returns) == 2
    assert len(seen_instructions) == 1 and "exactly one response" in (seen_instructions[0] or "")


async def test_single_pass_with_finalize_in_the_one_response_returns_the_output():
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[ToolCallPart("write", {"text": "a"}), ToolCallPart("finalize", {"reasoning": "one pass"})]
        )

    notebook = Notebook()
    run = await _finalize_agent(FunctionModel(model), AgenticConfig(max_requests=1)).run("go", deps=notebook)
    assert (run.finished, run.output, notebook.entries) == (True, Finalize(reasoning="one pass"), ["a"])


async def test_tool_calls_of_one_response_run_one_at_a_time_in_emission_order():
    events: list[str] = []

    async def step(ctx: RunContext[Notebook], name: str) -> str:
        """Record a step."""
        events.append(f"{name} start")
        await asyncio.sleep(0)  # yields to any concurrently running tool call
        events.append(f"{name} end")
        return name

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _responses(messages) == 0:
            return ModelResponse(parts=[ToolCallPart("step", {"name": n}) for n in ("a", "b", "c")])
        return ModelResponse(parts=[TextPart("done")])

    agent = RecursiveAgent(FunctionModel(model), instructions="Step.", deps_type=Notebook, tools=[step])
    await agent.run("go", deps=Notebook())
    assert events == ["a start", "a end", "b start", "b end", "c start", "c end"]


def test_run_sync_returns_the_same_result_shape_as_run():
    agent = RecursiveAgent(
        FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("hi")])),
        instructions="Say hi.",
        deps_type=Notebook,
    )
    run = agent.run_sync("hello", deps=Notebook())
    assert (run.output, run.finished, run.usage.requests) == ("hi", True, 1)


async def test_model_string_is_resolved_through_resolve_model():
    agent = RecursiveAgent("test", instructions="Answer.", deps_type=Notebook, config=AgenticConfig(max_depth=0))
    run = await agent.run("hello", deps=Notebook())
    assert run.finished and isinstance(run.output, str)


@pytest.mark.parametrize(
    "field_name, value",
    [
        ("max_requests", 0),
        ("max_tokens", 0),
        ("context_budget_tokens", 0),
        ("keep_recent_messages", -1),
        ("child_budget_fraction", 0.0),
        ("child_budget_fraction", 1.5),
        ("max_depth", -1),
    ],
)
def test_out_of_range_config_value_is_rejected_naming_the_field(field_name: str, value: float):
    with pytest.raises(ValueError, match=field_name):
        AgenticConfig(**{field_name: value})


def test_keep_recent_messages_zero_is_rejected_because_the_pending_request_must_survive_compaction():
    # With 0, compaction would elide the tool results of the request about to be sent (the model would
    # never see them) and the summary stage would index past the end of the history.
    with pytest.raises(ValueError, match="keep_recent_messages must be >= 1, got 0"):
        AgenticConfig(keep_recent_messages=0)
