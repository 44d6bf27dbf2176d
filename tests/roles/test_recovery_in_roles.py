"""The learning roles recover from what small real models do: prose where a tool call is required, a
call cut at the output cap, a runaway that never calls a tool - each repaired, or ended clearly."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.agentic import AgenticConfig
from ace.models import RequestSettings
from ace.roles import RecursiveReflector, Reflector, ReflectorOutput, SkillManager
from ace.skillbook import InsightSource, Skillbook

REFLECTION = ReflectorOutput(
    reasoning="the agent refused an eligible cancellation",
    error_identification="refused although insured",
    root_cause_analysis="misread the insurance clause",
    correct_approach="check insurance, then cancel",
    key_insight="With travel insurance, a covered cancellation is allowed.",
)
ANALYSIS = {
    "reasoning": "The agent refused.",
    "error_identification": "refused an eligible cancellation",
    "root_cause_analysis": "misread the insurance clause",
    "correct_approach": "check insurance, then cancel",
    "key_insight": "With insurance, cancel.",
}
SOURCE = InsightSource(source_system="tau2", trace_id="sim-1")


class Turns:
    """A FunctionModel playing fixed responses in order; counts the requests it received."""

    def __init__(self, *responses: ModelResponse) -> None:
        self.responses = list(responses)
        self.requests: list[list[ModelMessage]] = []
        self.model = FunctionModel(self._respond, model_name="turns")

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(messages)
        return self.responses[min(len(self.requests), len(self.responses)) - 1]


def _text(content: str, **fields: Any) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content)], **fields)


def _call(name: str, args: dict[str, Any] | str, **fields: Any) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args)], **fields)


async def test_skill_manager_tool_call_written_as_prose_json_is_recovered() -> None:
    add = {
        "section": "context",
        "issue": "Insured cancellations in tau2 airline",
        "keywords": ["airline"],
        "insight": "Cancel covered, insured bookings.",
    }
    turns = Turns(
        _text(f"I will add a skill:\n```json\n{json.dumps({'name': 'add_skill', 'arguments': add})}\n```"),
        _call("finalize", {"reasoning": "added the insurance skill"}),
    )
    book = Skillbook()

    output = await SkillManager(turns.model).update_skills(reflections=[REFLECTION], skillbook=book, source=SOURCE)

    assert [op.type for op in output.operations] == ["ADD"] and output.finished
    assert book.skills()[0].issue == add["issue"]
    assert len(turns.requests) == 2  # recovered from the text: no corrective turn was needed


async def test_skill_manager_plain_prose_gets_one_corrective_turn_then_finishes() -> None:
    turns = Turns(
        _text("The reflection teaches nothing new, so I will leave the skillbook as it is."),
        _call("finalize", {"reasoning": "nothing new"}),
    )

    output = await SkillManager(turns.model).update_skills(
        reflections=[REFLECTION], skillbook=Skillbook(), source=SOURCE
    )

    assert output.finished and output.operations == ()
    correction = " ".join(str(part.content) for part in turns.requests[1][-1].parts)
    assert "finalize" in correction


async def test_recursive_reflector_call_cut_at_the_output_cap_is_resent_shorter() -> None:
    turns = Turns(
        _call("execute_code", '{"code": "print(len(traces[\'messages\']))\\nfor m in traces', finish_reason="length"),
        _call("execute_code", {"code": "print(len(traces['messages']))"}),
        _call("finalize", ANALYSIS),
    )
    reflector = RecursiveReflector(turns.model, settings=RequestSettings(max_output_tokens=64))

    reflection = await reflector.reflect(trace={"messages": [{"role": "user", "content": "Cancel EHGLP3"}]})

    assert not reflection.failed and reflection.key_insight == "With insurance, cancel."
    resent = " ".join(str(part.content) for part in turns.requests[1][-1].parts)
    assert "cut off at 64" in resent and "execute_code" in resent


async def test_reflector_analysis_given_as_bare_json_text_is_recovered() -> None:
    turns = Turns(_text(f"Here is my analysis: {json.dumps(ANALYSIS)}"))

    reflection = await Reflector(turns.model).reflect(trace="user: cancel\nagent: no", question="cancel")

    assert reflection.error_identification == "refused an eligible cancellation"
    assert len(turns.requests) == 1


async def test_a_runaway_that_never_calls_a_tool_ends_as_a_failed_reflection_within_its_budget() -> None:
    rambling = _text("Let me think about the trace. " * 50, finish_reason="length")
    turns = Turns(rambling)
    reflector = RecursiveReflector(turns.model, config=AgenticConfig(max_requests=8))

    reflection = await reflector.reflect(trace={"messages": [{"role": "user", "content": "Cancel"}]})

    assert reflection.failed
    assert len(turns.requests) <= 8
