"""recovering(model): prose and truncated tool calls from a small model are repaired, at most one extra request each."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from logfire.testing import CaptureLogfire
from pydantic import BaseModel
from pydantic_ai import Agent, ToolOutput
from pydantic_ai.exceptions import IncompleteToolCall, UnexpectedModelBehavior
from pydantic_ai.messages import (
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage

from ace.models import resolve_model
from ace.models._recovery import RecoveringModel, recovering


class Finish(BaseModel):
    summary: str
    score: int = 0


def run_code(code: str) -> str:
    """Run a snippet of Python."""
    return "ran"


class Script:
    """A FunctionModel function giving the scripted responses in turn; records the messages of every request."""

    def __init__(self, *responses: Callable[[], ModelResponse]) -> None:
        self.responses = list(responses)
        self.requests: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        return self.responses[len(self.requests) - 1]()

    def last_request_text(self, index: int) -> str:
        """The text of the last message request `index` sent: the wrapper's corrective request, if any."""
        request = self.requests[index][-1]
        assert isinstance(request, ModelRequest)
        return "\n".join(str(getattr(part, "content", "")) for part in request.parts)


def prose(text: str) -> Callable[[], ModelResponse]:
    return lambda: ModelResponse(parts=[TextPart(text)], usage=RequestUsage(input_tokens=10, output_tokens=5))


def call(
    name: str,
    args: dict[str, object] | str,
    finish_reason: FinishReason | None = None,
) -> Callable[[], ModelResponse]:
    return lambda: ModelResponse(
        parts=[ToolCallPart(name, args)],
        finish_reason=finish_reason,
        usage=RequestUsage(input_tokens=10, output_tokens=5),
    )


def _agent(script: Script, output_type: Any = None) -> tuple[Agent[None, Any], RecoveringModel]:
    model = recovering(FunctionModel(script, model_name="qwen-small"))
    agent = Agent(model, output_type=output_type or ToolOutput(Finish, name="finalize"), tools=[run_code])
    return agent, model


def _tool(name: str, properties: dict[str, object], required: list[str]) -> ToolDefinition:
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolDefinition(name=name, parameters_json_schema=schema)


FINALIZE = _tool("finalize", {"summary": {"type": "string"}, "score": {"type": "integer"}}, ["summary"])
RUN_CODE = _tool("run_code", {"code": {"type": "string"}}, ["code"])
LINT_CODE = _tool("lint_code", {"code": {"type": "string"}}, ["code"])
TOOL_REQUIRED = ModelRequestParameters(
    output_mode="tool", output_tools=[FINALIZE], function_tools=[RUN_CODE], allow_text_output=False
)
MESSAGES: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("solve it")])]


async def test_prose_holding_a_fenced_json_finalize_call_is_recovered_without_an_extra_request() -> None:
    script = Script(prose('Done.\n```json\n{"name": "finalize", "arguments": {"summary": "all good"}}\n```\nBye.'))
    agent, model = _agent(script)

    result = await agent.run("solve it")

    assert result.output == Finish(summary="all good")
    assert len(script.requests) == 1
    assert model.recoveries == Counter(prose_recovered_from_text=1)


async def test_a_bare_arguments_object_matching_the_output_tool_is_recovered() -> None:
    script = Script(prose('My answer: {"summary": "all good", "score": 3} as requested'))
    agent, model = _agent(script)

    result = await agent.run("solve it")

    assert result.output == Finish(summary="all good", score=3)
    assert len(script.requests) == 1
    assert model.recoveries == Counter(prose_recovered_from_text=1)


async def test_a_structured_output_type_in_auto_mode_is_recovered_like_a_tool_output() -> None:
    script = Script(prose('{"summary": "all good"}'))
    agent, _ = _agent(script, output_type=Finish)

    result = await agent.run("solve it")

    assert result.output == Finish(summary="all good")
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "run_code", "parameters": {"code": "print(1)"}}',
        '<tool_call>\n{"name": "run_code", "arguments": "{\\"code\\": \\"print(1)\\"}"}\n</tool_call>',
        '{"type": "function", "function": {"name": "run_code", "arguments": {"code": "print(1)"}}}',
        'I will run {"code": "print(1)"} now.',
    ],
)
async def test_call_shapes_written_as_text_become_a_tool_call_keeping_the_response_fields(text: str) -> None:
    script = Script(prose(text))
    model = recovering(FunctionModel(script, model_name="qwen-small"))

    response = await model.request(MESSAGES, None, TOOL_REQUIRED)

    [part] = response.parts
    assert isinstance(part, ToolCallPart)
    assert (part.tool_name, part.args) == ("run_code", {"code": "print(1)"})
    assert (response.finish_reason, response.model_name, response.usage.output_tokens) == ("tool_call", "qwen-small", 5)
    assert len(script.requests) == 1


async def test_plain_prose_gets_one_corrective_turn_naming_the_tools_and_the_finishing_tool() -> None:
    script = Script(prose("The answer is that everything works."), call("finalize", {"summary": "works"}))
    agent, model = _agent(script)

    result = await agent.run("solve it")

    assert result.output == Finish(summary="works")
    assert len(script.requests) == 2
    corrective = script.last_request_text(1)
    assert "needs a tool call" in corrective and "run_code" in corrective
    assert "Call finalize to finish the task" in corrective
    assert model.recoveries == Counter(prose_corrective_turn=1)


async def test_the_rejected_prose_response_still_counts_in_the_run_usage() -> None:
    script = Script(prose("Everything works."), call("finalize", {"summary": "works"}))
    agent, _ = _agent(script)

    result = await agent.run("solve it")

    assert (result.usage.requests, result.usage.input_tokens, result.usage.output_tokens) == (1, 20, 10)


async def test_prose_twice_without_a_call_returns_the_second_prose_response() -> None:
    script = Script(prose("Thinking aloud."), prose("Still thinking aloud."))
    model = recovering(FunctionModel(script))

    response = await model.request(MESSAGES, None, TOOL_REQUIRED)

    assert response.text == "Still thinking aloud." and len(script.requests) == 2
    assert model.recoveries == Counter(prose_corrective_turn=1, unrecovered=1)


async def test_a_run_that_stays_in_prose_fails_on_pydantic_ais_output_retries_after_two_requests_per_step() -> None:
    script = Script(*[prose(f"Thinking aloud, take {i}.") for i in range(4)])
    agent, model = _agent(script)

    with pytest.raises(UnexpectedModelBehavior, match=r"Exceeded maximum output retries \(1\)"):
        await agent.run("solve it")

    # pydantic-ai's default single output retry makes two steps; each reached the model twice.
    assert len(script.requests) == 4
    assert model.recoveries == Counter(prose_corrective_turn=2, unrecovered=2)


async def test_a_truncated_tool_call_gets_one_follow_up_naming_the_tool_and_the_token_cap() -> None:
    script = Script(
        call("run_code", '{"code": "print(1', finish_reason="length"),
        call("run_code", {"code": "print(1)"}),
        call("finalize", {"summary": "ran it"}),
    )
    agent, model = _agent(script)

    result = await agent.run("solve it", model_settings={"max_tokens": 64})

    assert result.output == Finish(summary="ran it")
    assert len(script.requests) == 3
    retried = script.requests[1][-1].parts
    assert [(p.tool_name, p.outcome) for p in retried if isinstance(p, ToolReturnPart)] == [("run_code", "retried")]
    assert "Your call to run_code was cut off at 64 tokens" in script.last_request_text(1)
    assert model.recoveries == Counter(truncated_tool_call=1)


async def test_the_other_calls_of_a_truncated_response_are_answered_as_not_run() -> None:
    calls = [ToolCallPart("run_code", {"code": "1"}), ToolCallPart("finalize", '{"summary": "')]
    cut_short = ModelResponse(parts=calls, finish_reason="length")
    script = Script(lambda: cut_short, call("finalize", {"summary": "ok"}))
    model = recovering(FunctionModel(script))

    await model.request(MESSAGES, {"max_tokens": 64}, TOOL_REQUIRED)

    [not_run, cut] = [p for p in script.requests[1][-1].parts if isinstance(p, ToolReturnPart)]
    assert (not_run.tool_name, cut.tool_name) == ("run_code", "finalize")
    assert str(not_run.content).startswith("Not run") and "finalize was cut off at 64 tokens" in str(cut.content)


async def test_a_truncated_call_without_a_max_tokens_setting_names_the_output_token_limit() -> None:
    script = Script(call("run_code", '{"code": "pri', finish_reason="length"), call("run_code", {"code": "1"}))
    model = recovering(FunctionModel(script))

    await model.request(MESSAGES, None, TOOL_REQUIRED)

    assert "cut off at the output token limit" in script.last_request_text(1)


async def test_a_follow_up_truncated_again_is_returned_as_is() -> None:
    script = Script(
        call("run_code", '{"code": "print(1', finish_reason="length"),
        call("run_code", '{"code": "print(', finish_reason="length"),
    )
    model = recovering(FunctionModel(script))

    response = await model.request(MESSAGES, {"max_tokens": 64}, TOOL_REQUIRED)

    [part] = response.parts
    assert isinstance(part, ToolCallPart) and part.args == '{"code": "print('
    assert response.finish_reason == "length"
    assert len(script.requests) == 2
    assert model.recoveries == Counter(truncated_tool_call=1, unrecovered=1)


async def test_a_run_whose_calls_stay_truncated_ends_with_incomplete_tool_call() -> None:
    script = Script(*[call("run_code", '{"code": "print(1', finish_reason="length") for _ in range(4)])
    agent, model = _agent(script)

    with pytest.raises(IncompleteToolCall, match=r"token limit \(64\)"):
        await agent.run("solve it", model_settings={"max_tokens": 64})

    # Two steps of two requests each: pydantic-ai first retries the invalid arguments as a validation error.
    assert len(script.requests) == 4
    assert model.recoveries == Counter(truncated_tool_call=2, unrecovered=2)


async def test_prose_is_left_alone_when_text_output_is_allowed() -> None:
    script = Script(prose('Plain answer {"code": "x"}'))
    agent, model = _agent(script, output_type=str)

    result = await agent.run("solve it")

    assert result.output == 'Plain answer {"code": "x"}'
    assert len(script.requests) == 1 and model.recoveries == Counter()


async def test_a_valid_tool_call_response_is_returned_untouched() -> None:
    part = ToolCallPart("run_code", {"code": "print(1)"})
    original = ModelResponse(parts=[part], finish_reason="length")
    model = recovering(FunctionModel(lambda messages, info: original))

    response = await model.request(MESSAGES, None, TOOL_REQUIRED)

    assert response is original and response.parts[0] is part
    assert model.recoveries == Counter()


async def test_a_bare_object_fitting_two_tools_is_not_guessed() -> None:
    script = Script(prose('{"code": "print(1)"}'), prose("still prose"))
    model = recovering(FunctionModel(script))
    params = ModelRequestParameters(
        output_mode="tool", output_tools=[FINALIZE], function_tools=[RUN_CODE, LINT_CODE], allow_text_output=False
    )

    response = await model.request(MESSAGES, None, params)

    assert response.text == "still prose" and len(script.requests) == 2
    assert model.recoveries == Counter(prose_corrective_turn=1, unrecovered=1)


async def test_an_object_fitting_the_output_tool_and_a_function_tool_goes_to_the_output_tool() -> None:
    note = _tool("note", {"summary": {"type": "string"}}, ["summary"])
    model = recovering(FunctionModel(Script(prose('{"summary": "done"}'))))
    params = ModelRequestParameters(
        output_mode="tool", output_tools=[FINALIZE], function_tools=[note], allow_text_output=False
    )

    response = await model.request(MESSAGES, None, params)

    [part] = response.parts
    assert isinstance(part, ToolCallPart) and part.tool_name == "finalize"


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "delete_everything", "arguments": {"code": "rm"}}',  # unknown tool; its nested arguments are not used
        '{"code": "print(1)", "timeout": 3}',  # a key the tool does not take
        '{"score": 3}',  # the output tool's required summary is missing
        "{'code': 'print(1)'}",  # not JSON
    ],
)
async def test_objects_that_fit_no_tool_lead_to_a_corrective_turn(text: str) -> None:
    script = Script(prose(text), call("run_code", {"code": "print(1)"}))
    model = recovering(FunctionModel(script))

    response = await model.request(MESSAGES, None, TOOL_REQUIRED)

    assert isinstance(response.parts[0], ToolCallPart) and len(script.requests) == 2
    assert model.recoveries == Counter(prose_corrective_turn=1)


async def test_recoveries_are_traced_as_model_recovery_spans(capfire: CaptureLogfire) -> None:
    script = Script(prose("no call here"), prose('{"summary": "ok"}'))
    model = recovering(FunctionModel(script))

    await model.request(MESSAGES, None, TOOL_REQUIRED)

    [span] = [s for s in capfire.exporter.exported_spans_as_dict() if s["name"] == "model.recovery"]
    attributes = span["attributes"]
    assert (attributes["kind"], attributes["tool_name"]) == ("prose_instead_of_tool_call", "finalize")
    assert (attributes["corrective_turn"], attributes["recovered_from_text"], attributes["recovered"]) == (
        True,
        True,
        True,
    )


def _wire_reply(
    content: str | None, finish: str, calls: tuple[tuple[str, str], ...] = ()
) -> Callable[..., dict[str, Any]]:
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": content, **({"tool_calls": tool_calls} if tool_calls else {})}
    return lambda messages: {
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


async def test_the_corrective_turn_for_prose_reaches_an_openai_compatible_server_as_a_system_message(
    scripted_llm,
) -> None:
    scripted_llm.replies = [
        _wire_reply("Everything works.", "stop"),
        _wire_reply(None, "tool_calls", (("finalize", json.dumps({"summary": "works"})),)),
    ]
    agent = Agent(
        recovering(resolve_model(scripted_llm.model_string)),
        instructions="Be brief.",
        output_type=ToolOutput(Finish, name="finalize"),
        tools=[run_code],
    )

    result = await agent.run("solve it")

    assert result.output == Finish(summary="works")
    sent = scripted_llm.calls[1]["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert (sent[-2]["role"], sent[-2]["content"]) == ("assistant", "Everything works.")
    assert sent[-1]["role"] == "system" and "needs a tool call" in str(sent[-1]["content"])


async def test_the_follow_up_for_a_truncated_call_reaches_an_openai_compatible_server_as_its_tool_result(
    scripted_llm,
) -> None:
    scripted_llm.replies = [
        _wire_reply(None, "length", (("run_code", '{"code": "print(1'),)),
        _wire_reply(None, "tool_calls", (("finalize", json.dumps({"summary": "short"})),)),
    ]
    agent = Agent(
        recovering(resolve_model(scripted_llm.model_string)),
        output_type=ToolOutput(Finish, name="finalize"),
        tools=[run_code],
    )

    result = await agent.run("solve it", model_settings={"max_tokens": 64})

    assert result.output == Finish(summary="short")
    tool_message = scripted_llm.calls[1]["messages"][-1]
    assert (tool_message["role"], tool_message["tool_call_id"]) == ("tool", "call_0")
    assert "cut off at 64 tokens" in str(tool_message["content"])


def test_model_name_is_forwarded_and_wrapping_twice_returns_the_same_wrapper() -> None:
    model = recovering(FunctionModel(lambda messages, info: ModelResponse(parts=[]), model_name="qwen-small"))

    assert model.model_name == "qwen-small" and model.system == "function"
    assert recovering(model) is model


def prose_and_call(text: str, name: str, args: dict[str, object]) -> Callable[[], ModelResponse]:
    return lambda: ModelResponse(
        parts=[TextPart(text), ToolCallPart(name, args)], usage=RequestUsage(input_tokens=10, output_tokens=5)
    )


async def test_prose_around_a_tool_call_is_dropped_when_only_tool_calls_count() -> None:
    script = Script(
        prose_and_call("Let me think at length first... " * 20, "run_code", {"code": "1"}),
        call("finalize", {"summary": "done"}),
    )
    agent, _ = _agent(script)

    await agent.run("go")

    second = script.requests[1]
    responses = [message for message in second if isinstance(message, ModelResponse)]
    assert [part.part_kind for part in responses[0].parts] == ["tool-call"]


async def test_prose_around_a_tool_call_is_kept_when_text_is_an_answer() -> None:
    script = Script(prose_and_call("Checking first.", "run_code", {"code": "1"}), prose("All done."))
    agent, _ = _agent(script, output_type=str)

    await agent.run("go")

    responses = [message for message in script.requests[1] if isinstance(message, ModelResponse)]
    assert [part.part_kind for part in responses[0].parts] == ["text", "tool-call"]


async def test_identical_calls_repeated_in_one_response_run_once() -> None:
    ran: list[str] = []

    def record(code: str) -> str:
        """Run a snippet."""
        ran.append(code)
        return "ran"

    repeated = ModelResponse(
        parts=[ToolCallPart("record", {"code": "1"}) for _ in range(5)] + [ToolCallPart("record", {"code": "2"})]
    )
    script = Script(lambda: repeated, call("finalize", {"summary": "done"}))
    model = recovering(FunctionModel(script, model_name="qwen-small"))

    await Agent(model, output_type=ToolOutput(Finish, name="finalize"), tools=[record]).run("go")

    assert ran == ["1", "2"]
    assert model.recoveries["duplicate_calls_dropped"] == 4
