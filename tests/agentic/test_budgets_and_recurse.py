"""Session budgets trip with BudgetExhausted; recurse children are capped and count against the parent."""

from __future__ import annotations

import pytest
from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ace.agentic import AgenticConfig, BudgetExhausted, RecursiveAgent


def ping(ctx: RunContext[None]) -> str:
    """Do one step of work."""
    return "pong"


def _first_prompt(messages: list[ModelMessage]) -> str:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    return next(str(p.content) for p in first.parts if p.part_kind == "user-prompt")


def _agent(model: FunctionModel, config: AgenticConfig) -> RecursiveAgent[None, str]:
    return RecursiveAgent(model, instructions="Work.", deps_type=type(None), tools=[ping], config=config)


def _always_ping(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("ping", {})])


async def test_endless_tool_loop_trips_max_requests_with_usage_attached():
    with pytest.raises(BudgetExhausted) as excinfo:
        await _agent(FunctionModel(_always_ping), AgenticConfig(max_requests=3, max_depth=0)).run("go", deps=None)
    assert excinfo.value.limit == "requests"
    assert excinfo.value.usage.requests == 3


async def test_token_use_beyond_max_tokens_trips_the_token_budget():
    def costly(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("ping", {})], usage=RequestUsage(input_tokens=100, output_tokens=50))

    with pytest.raises(BudgetExhausted) as excinfo:
        await _agent(FunctionModel(costly), AgenticConfig(max_tokens=250, max_depth=0)).run("go", deps=None)
    assert excinfo.value.limit == "tokens"
    assert excinfo.value.usage.total_tokens == 300


def _parent_delegates_once(child_model):
    """Parent: call recurse once, then answer with what the child returned; the child runs `child_model`."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _first_prompt(messages) == "sub-task":
            return child_model(messages, info)
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart) and p.tool_name == "recurse"]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("recurse", {"task": "sub-task"})])
        return ModelResponse(parts=[TextPart(f"parent got: {returns[0].content}")])

    return model


async def test_recurse_child_is_capped_at_its_share_of_the_remaining_budget_and_its_usage_counts():
    child_requests = 0

    def endless_child(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal child_requests
        child_requests += 1
        return _always_ping(messages, info)

    config = AgenticConfig(max_requests=10, child_budget_fraction=0.5, max_depth=1)
    run = await _agent(FunctionModel(_parent_delegates_once(endless_child)), config).run("go", deps=None)
    assert child_requests == 4  # floor((10 - 1 parent request) * 0.5)
    assert "ran out of its requests budget" in str(run.output)
    assert run.usage.requests == 1 + 4 + 1


async def test_recurse_returns_the_child_output_to_the_parent_and_adds_child_tokens():
    def answering_child(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("child result")], usage=RequestUsage(input_tokens=1000, output_tokens=1))

    run = await _agent(FunctionModel(_parent_delegates_once(answering_child)), AgenticConfig(max_depth=1)).run(
        "go", deps=None
    )
    assert run.output == "parent got: child result"
    assert run.usage.requests == 3
    assert run.usage.input_tokens >= 1000


async def test_child_token_budget_is_a_share_of_the_parent_remaining_tokens():
    def heavy_child(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("ping", {})], usage=RequestUsage(input_tokens=300, output_tokens=0))

    config = AgenticConfig(max_tokens=2000, child_budget_fraction=0.5, max_depth=1)
    run = await _agent(FunctionModel(_parent_delegates_once(heavy_child)), config).run("go", deps=None)
    assert "ran out of its tokens budget" in str(run.output)
    # parent's first response used a few estimated tokens; the child may use at most half of the rest (< 1000),
    # so it stops after its fourth 300-token response (1200 > cap).
    assert 1200 <= run.usage.total_tokens < 2000


async def test_max_depth_zero_offers_no_recurse_tool_and_depth_one_children_cannot_recurse():
    offered: dict[str, list[str]] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered[_first_prompt(messages)] = sorted(t.name for t in info.function_tools)
        if (
            _first_prompt(messages) == "go"
            and not any(
                isinstance(m, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in m.parts) for m in messages
            )
            and "recurse" in offered["go"]
        ):
            return ModelResponse(parts=[ToolCallPart("recurse", {"task": "sub-task"})])
        return ModelResponse(parts=[TextPart("done")])

    await _agent(FunctionModel(model), AgenticConfig(max_depth=0)).run("go", deps=None)
    assert offered == {"go": ["ping"]}
    await _agent(FunctionModel(model), AgenticConfig(max_depth=1)).run("go", deps=None)
    assert offered == {"go": ["ping", "recurse"], "sub-task": ["ping"]}
