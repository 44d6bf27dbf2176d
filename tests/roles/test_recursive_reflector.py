"""The Recursive Reflector runs code over a real recorded trace, and fails honestly when it cannot."""

from __future__ import annotations

import re
from typing import Any

from pydantic_ai.messages import ToolCallPart, ToolReturnPart

from ace.agentic import AgenticConfig
from ace.roles import RecursiveReflector
from ace.skillbook import Skillbook

COUNT_CODE = (
    "messages = traces['messages']\n"
    "calls = [c['name'] for m in messages for c in (m.get('tool_calls') or [])]\n"
    "print('messages', len(messages))\n"
    "print('calls', ','.join(calls))\n"
)


def _returns(messages: list[Any], tool_name: str) -> list[Any]:
    return [
        part.content for part in messages[-1].parts if isinstance(part, ToolReturnPart) and part.tool_name == tool_name
    ]


def _finalize(**overrides: str) -> list[ToolCallPart]:
    fields = {
        "reasoning": "r",
        "error_identification": "e",
        "root_cause_analysis": "c",
        "correct_approach": "a",
        "key_insight": "k",
    }
    return [ToolCallPart("finalize", {**fields, **overrides})]


async def test_reflects_by_executing_code_over_a_recorded_tau2_simulation(
    script, recorded_simulation: dict[str, Any]
) -> None:
    def conclude(messages: list[Any]) -> list[ToolCallPart]:
        (output,) = _returns(messages, "execute_code")
        count = re.search(r"messages (\d+)", output).group(1)
        calls = re.search(r"calls (.*)", output).group(1)
        return _finalize(reasoning=f"the trace has {count} messages", key_insight=f"tools used: {calls}")

    model = script([ToolCallPart("execute_code", {"code": COUNT_CODE})], conclude)

    reflection = await RecursiveReflector(model.model).reflect(trace=recorded_simulation, question="cancel EHGLP3")

    expected_calls = [c["name"] for m in recorded_simulation["messages"] for c in (m.get("tool_calls") or [])]
    assert not reflection.failed
    assert reflection.reasoning == f"the trace has {len(recorded_simulation['messages'])} messages"
    assert reflection.key_insight == f"tools used: {','.join(expected_calls)}"


async def test_submission_without_code_is_rejected_until_code_runs(script) -> None:
    model = script(_finalize(), [ToolCallPart("execute_code", {"code": "print(len(traces))"})], _finalize())

    reflection = await RecursiveReflector(model.model).reflect(trace="short trace")

    assert not reflection.failed
    assert len(model.requests) == 3


async def test_never_running_code_returns_a_failed_reflection_not_fake_content(script) -> None:
    model = script(*([_finalize(key_insight="invented")] * 10))

    reflection = await RecursiveReflector(model.model).reflect(trace="short trace")

    assert reflection.failed
    assert reflection.failure_reason
    assert reflection.key_insight == "" and reflection.reasoning == ""


async def test_budget_exhaustion_returns_a_failed_reflection(script) -> None:
    explore = [ToolCallPart("execute_code", {"code": "print(1)"})]
    model = script(*([explore] * 10))

    reflection = await RecursiveReflector(model.model, config=AgenticConfig(max_requests=2)).reflect(trace="t")

    assert reflection.failed
    assert "budget" in reflection.failure_reason
    assert len(model.requests) == 2


async def test_read_only_skill_tools_show_counters_and_change_nothing(script, embedder) -> None:
    book = Skillbook()
    skill = book.add_skill("context", "Refund rules for cancelled flights", ["airline", "refund"], "Check status first")
    book.tag_skill(skill.id, 1)
    before = book.get_skill(skill.id).to_dict()
    seen: dict[str, Any] = {}

    def inspect(messages: list[Any]) -> list[ToolCallPart]:
        (seen["read"],) = _returns(messages, "read_skill")
        (seen["search"],) = _returns(messages, "search_skillbook")
        return _finalize()

    model = script(
        [
            ToolCallPart("execute_code", {"code": "print(traces)"}),
            ToolCallPart("read_skill", {"skill_id": skill.id}),
            ToolCallPart("search_skillbook", {"query": "refund cancelled flight"}),
        ],
        inspect,
    )

    await RecursiveReflector(model.model, skillbook=book, embedder=embedder).reflect(trace="t")

    assert seen["read"]["counters"]["helpful_count"] == 1
    assert [hit["id"] for hit in seen["search"]] == [skill.id]
    assert book.get_skill(skill.id).to_dict() == before


async def test_single_pass_without_submission_is_a_failed_reflection(script) -> None:
    model = script([ToolCallPart("execute_code", {"code": "print(1)"})])

    reflection = await RecursiveReflector(model.model, config=AgenticConfig(max_requests=1)).reflect(trace="t")

    assert reflection.failed
    assert "single tool-call pass" in reflection.failure_reason


async def test_lone_surrogates_in_the_trace_the_sandbox_output_and_the_submission_do_not_end_the_session() -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage

    turns = [
        [ToolCallPart("execute_code", {"code": "print('printed', chr(0xd800))"})],
        _finalize(key_insight="lesson \udc00"),
    ]
    sent: list[bytes] = []

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        # What an HTTP client does with the request: encoding raises on a lone surrogate.
        sent.append(ModelMessagesTypeAdapter.dump_json(messages))
        # Usage given, so that FunctionModel does not estimate it from the surrogate in our own arguments.
        return ModelResponse(parts=turns[len(sent) - 1], usage=RequestUsage(input_tokens=1, output_tokens=1))

    reflection = await RecursiveReflector(FunctionModel(respond)).reflect(
        trace={"messages": [{"role": "user", "content": "trace text \ud800"}]}
    )

    assert not reflection.failed
    assert reflection.key_insight == "lesson \ufffd"
    assert len(sent) == 2
    assert b"trace text \\ufffd" in sent[0] or "trace text \ufffd".encode() in sent[0]
    assert "printed \ufffd".encode() in sent[1] or b"printed \\ufffd" in sent[1]
