"""`ACE.from_roles(recheck=True)`: a lesson is kept only if it fixes the sample it was learned from."""

from __future__ import annotations

from typing import Any

import pytest
from loop_roles import GroundTruthEnvironment, reflector_model, user_prompt
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.errors import UsageError
from ace.roles import Agent, AgentOutput, Reflector, SkillManager
from ace.runners import ACE
from ace.skillbook import Skillbook, UpdateOperation
from ace.steps import AgentStep, EvaluateStep, Recheck, Sample
from ace.steps.context import ACEStepContext

SAMPLE = Sample("six times nine?", ground_truth="54", id="q")


class FollowingAgent:
    """Answers 54 when a skill in its prompt says so or shows it as a worked example, else 42;
    counts its requests."""

    def __init__(self) -> None:
        self.requests = 0

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.requests += 1
            skills = user_prompt(messages).partition("<skills>")[2].partition("</skills>")[0]
            answer = "54" if "the answer is 54" in skills or "-> '54'" in skills else "42"
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"reasoning": "r", "answer": answer})])

        return FunctionModel(respond)


ISSUE = "Multiplying small numbers"


def _skill_manager(
    insight: str,
    revised_insight: str | None = None,
    told: list[str] | None = None,
    revisions: int = 1,
    worked_examples: bool = False,
) -> SkillManager:
    """Adds one context skill with `insight`, then finalizes; when finalize is refused, notes why
    in `told` and, given a `revised_insight`, updates the skill with it before finalizing again."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts if messages and messages[-1].kind == "request" else []
        refusals = [str(p.content) for p in last if str(getattr(p, "content", "")).startswith("finalize refused")]
        if refusals and told is not None:
            told.extend(refusals)
        if refusals and revised_insight is not None:
            update = {"skill_id": "context-00001", "issue": ISSUE, "insight": revised_insight}
            return ModelResponse(parts=[ToolCallPart("update_skill", update)])
        if any(m.kind == "request" and any(p.part_kind == "tool-return" for p in m.parts) for m in messages):
            return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "kept the lesson"})])
        add = {"section": "context", "issue": ISSUE, "keywords": ["arithmetic"], "insight": insight}
        return ModelResponse(parts=[ToolCallPart("add_skill", add)])

    return SkillManager(FunctionModel(respond), check_revisions=revisions, worked_examples=worked_examples)


def _learn(skill_manager: SkillManager) -> tuple[ACE, FollowingAgent, ACEStepContext]:
    agent = FollowingAgent()
    ace = ACE.from_roles(
        agent=Agent(agent.model()),
        environment=GroundTruthEnvironment(),
        reflector=Reflector(reflector_model()),
        skill_manager=skill_manager,
        recheck=True,
    )
    [result] = ace.run([SAMPLE])
    assert result.error is None
    return ace, agent, result.output


def test_a_lesson_that_fixes_its_own_sample_is_kept_and_the_recheck_counts_no_use() -> None:
    ace, agent, ctx = _learn(_skill_manager("When multiplying six by nine, the answer is 54."))

    assert agent.requests == 2  # the sample, then the recheck with the new skill
    assert [op.type for op in ctx.skill_manager_output.operations] == ["ADD"]
    [skill] = ace.skillbook.skills()
    assert skill.insight == "When multiplying six by nine, the answer is 54." and skill.used_count == 0


def test_a_lesson_that_still_fails_after_its_revision_is_undone_and_the_output_says_why() -> None:
    told: list[str] = []
    ace, agent, ctx = _learn(_skill_manager("Be careful with arithmetic.", told=told))

    assert agent.requests == 3  # the sample, the recheck that refused finalize, the recheck after it
    why = (
        "the lesson did not fix its own task: answering it again with skills ['context-00001'], "
        "the agent said '42' (reward 0; feedback: wrong)"
    )
    assert len(told) == 1 and told[0].startswith(f"finalize refused: {why}. Revise the skill with update_skill")
    output = ctx.skill_manager_output
    assert output.operations == () and [op.type for op in output.undone] == ["ADD"]
    assert output.undone_because == why
    assert ace.skillbook.to_dict() == Skillbook().to_dict()  # no skill, and the id counter wound back


def test_a_lesson_revised_after_a_refused_finalize_is_kept_once_it_fixes_its_sample() -> None:
    revised = "When multiplying six by nine, the answer is 54."
    ace, agent, ctx = _learn(_skill_manager("Be careful with arithmetic.", revised_insight=revised))

    assert agent.requests == 3
    assert [op.type for op in ctx.skill_manager_output.operations] == ["ADD", "UPDATE"]
    assert [skill.insight for skill in ace.skillbook.skills()] == [revised]


def test_a_lesson_whose_rule_is_only_its_worked_example_fails_the_recheck_that_withholds_it() -> None:
    ace, agent, ctx = _learn(_skill_manager("Be careful with arithmetic.", revisions=0, worked_examples=True))

    assert agent.requests == 2  # the agent would copy '54' from the example; the recheck withholds it
    assert ctx.skill_manager_output.undone_because == (
        "the lesson did not fix its own task: answering it again with skills ['context-00001'] without its "
        "worked example, the agent said '42' (reward 0; feedback: wrong)"
    )
    assert ace.skillbook.skills() == []

    revised = "When multiplying six by nine, the answer is 54."
    kept, _, _ = _learn(_skill_manager("Be careful.", revised_insight=revised, worked_examples=True))
    [skill] = kept.skillbook.skills()
    assert skill.insight == revised  # it quotes the expected answer, so no example was appended


def test_with_no_revision_a_failed_recheck_undoes_the_session_at_once() -> None:
    told: list[str] = []
    ace, agent, ctx = _learn(_skill_manager("Be careful with arithmetic.", told=told, revisions=0))

    assert agent.requests == 2 and told == []
    assert ctx.skill_manager_output.undone_because is not None and ace.skillbook.skills() == []


async def test_a_session_that_only_tags_or_removes_is_not_rechecked() -> None:
    class Unreachable:
        async def answer(self, *args: Any, **kwargs: Any) -> AgentOutput:
            raise AssertionError("no recheck for a session without ADD or UPDATE")

    recheck = Recheck(AgentStep(Unreachable(), Skillbook()), EvaluateStep(GroundTruthEnvironment()))
    check = recheck.check_for(ACEStepContext(sample=SAMPLE))
    operations = [
        UpdateOperation(type="TAG", skill_id="context-00001", delta=1),
        UpdateOperation(type="REMOVE", skill_id="context-00002"),
    ]

    assert await check(operations) is None


def test_recheck_without_an_environment_is_refused() -> None:
    with pytest.raises(UsageError, match="recheck needs an environment"):
        ACE.from_roles(
            agent=Agent(FollowingAgent().model()),
            reflector=Reflector(reflector_model()),
            skill_manager=_skill_manager("x"),
            recheck=True,
        )
