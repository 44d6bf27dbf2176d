"""metered/UsageMeter: requests, tokens, failures and cost of a model's calls add up exactly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ace.models import UsageMeter, UsageTotals, metered

PARAMS = ModelRequestParameters(allow_text_output=True)


def _messages(text: str = "hi") -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(content=text)])]


def _fixed(input_tokens: int = 10, output_tokens: int = 3, cache_read_tokens: int = 0) -> FunctionModel:
    usage = RequestUsage(input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=cache_read_tokens)
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("ok")], usage=usage))


def _priced_response() -> ModelResponse:
    usage = RequestUsage(input_tokens=1000, output_tokens=100)
    return ModelResponse(parts=[TextPart("ok")], usage=usage, model_name="gpt-4o", provider_name="openai")


async def test_agent_run_with_a_tool_call_counts_both_requests_and_their_tokens() -> None:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart("add", {"a": 1, "b": 2})], usage=RequestUsage(input_tokens=20, output_tokens=5)
            )
        return ModelResponse(parts=[TextPart("3")], usage=RequestUsage(input_tokens=30, output_tokens=2))

    meter = UsageMeter()
    agent = Agent(metered(FunctionModel(reply), meter))

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    result = await agent.run("1+2?")

    assert result.output == "3"
    totals = meter.snapshot()
    assert (totals.requests, totals.input_tokens, totals.output_tokens) == (2, 50, 7)
    assert totals.requests == result.usage.requests


async def test_direct_request_calls_are_counted() -> None:
    meter = UsageMeter()
    model = metered(_fixed(input_tokens=10, output_tokens=3, cache_read_tokens=4), meter)

    for _ in range(3):
        response = await model.request(_messages(), None, PARAMS)

    assert response.parts == [TextPart("ok")]
    assert meter.snapshot() == UsageTotals(
        requests=3, input_tokens=30, output_tokens=9, cache_read_tokens=12, unknown_cost_responses=3
    )


async def test_a_raising_model_counts_a_failed_request_and_reraises_the_same_exception() -> None:
    error = RuntimeError("provider down")

    def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise error

    meter = UsageMeter()
    with pytest.raises(RuntimeError) as raised:
        await metered(FunctionModel(fail), meter).request(_messages(), None, PARAMS)

    assert raised.value is error
    assert meter.snapshot() == UsageTotals(failed_requests=1)


async def test_a_response_without_a_price_counts_as_unknown_cost_and_leaves_cost_none() -> None:
    meter = UsageMeter()

    await metered(_fixed(), meter).request(_messages(), None, PARAMS)

    totals = meter.snapshot()
    assert (totals.cost_usd, totals.unknown_cost_responses) == (None, 1)


def test_priced_responses_sum_their_genai_prices_cost() -> None:
    meter = UsageMeter()
    response = _priced_response()
    price = float(response.cost().total_price)

    meter.record(response)
    assert meter.snapshot().cost_usd == price > 0

    meter.record(_priced_response())
    meter.record(ModelResponse(parts=[TextPart("x")], model_name="function:unpriced"))
    totals = meter.snapshot()
    assert (totals.cost_usd, totals.unknown_cost_responses) == (2 * price, 1)


def test_a_cost_the_provider_reported_is_used_as_is() -> None:
    meter = UsageMeter()
    response = _priced_response()
    response.usage.cost = response.cost().total_price * 3

    meter.record(response)

    assert meter.snapshot().cost_usd == float(response.usage.cost)


async def test_a_streamed_request_is_counted_when_the_stream_ends() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "hello "
        yield "world"

    meter = UsageMeter()
    async with Agent(metered(FunctionModel(stream_function=stream), meter)).run_stream("hi") as run:
        assert await run.get_output() == "hello world"
        usage = run.usage

    totals = meter.snapshot()
    assert (totals.requests, totals.output_tokens) == (1, usage.output_tokens)
    assert totals.output_tokens > 0


def test_snapshot_difference_is_the_usage_between_the_snapshots() -> None:
    meter = UsageMeter()
    meter.record(_priced_response())
    before = meter.snapshot()
    meter.record(
        ModelResponse(
            parts=[TextPart("x")], usage=RequestUsage(input_tokens=7, output_tokens=1), finish_reason="length"
        )
    )
    meter.record_failure()

    phase = meter.snapshot() - before

    assert phase == UsageTotals(
        requests=1, failed_requests=1, input_tokens=7, output_tokens=1, unknown_cost_responses=1, truncated_responses=1
    )
    assert phase.to_dict() == {
        "requests": 1,
        "failed_requests": 1,
        "input_tokens": 7,
        "output_tokens": 1,
        "cache_read_tokens": 0,
        "cost_usd": None,
        "unknown_cost_responses": 1,
        "truncated_responses": 1,
    }
    assert phase + before - before == phase
    assert (meter.snapshot() - UsageTotals()).cost_usd == before.cost_usd


async def test_concurrent_requests_from_many_tasks_sum_exactly() -> None:
    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(0)  # let the other tasks interleave
        return ModelResponse(parts=[TextPart("ok")], usage=RequestUsage(input_tokens=3, output_tokens=2))

    meter = UsageMeter()
    model = metered(FunctionModel(reply), meter)

    await asyncio.gather(*(model.request(_messages(), None, PARAMS) for _ in range(200)))

    totals = meter.snapshot()
    assert (totals.requests, totals.input_tokens, totals.output_tokens) == (200, 600, 400)


def test_the_wrapped_model_name_and_system_are_kept() -> None:
    inner = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("x")]), model_name="role-model")

    model = metered(inner, UsageMeter())

    assert (model.model_name, model.system) == ("role-model", inner.system)


async def test_a_stream_that_raises_counts_a_failed_request() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "partial"
        raise RuntimeError("connection reset")

    meter = UsageMeter()
    with pytest.raises(RuntimeError, match="connection reset"):
        async with Agent(metered(FunctionModel(stream_function=stream), meter)).run_stream("hi") as run:
            await run.get_output()

    assert meter.snapshot() == UsageTotals(failed_requests=1)


def test_settings_sent_lists_each_combination_with_its_request_count() -> None:
    meter = UsageMeter()
    response = ModelResponse(parts=[TextPart("x")], usage=RequestUsage(input_tokens=1, output_tokens=1))

    for settings in ({"max_tokens": 64, "temperature": 0.0}, {"max_tokens": 64, "temperature": 0.0}, None):
        meter.record(response, settings)

    assert meter.settings_sent() == [
        {"max_tokens": 64, "temperature": 0.0, "timeout": None, "requests": 2},
        {"max_tokens": None, "temperature": None, "timeout": None, "requests": 1},
    ]
