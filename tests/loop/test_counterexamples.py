"""`ACE.from_roles(counterexamples=True)`: a task the injected skills made wrong, and that the agent gets
right without them, becomes their counterexample; the matcher then withholds them from tasks like it."""

from __future__ import annotations

import pytest
from loop_roles import (
    CLEARANCE,
    CLEARANCE_AGAIN,
    CLEARANCE_RULE,
    REGULAR,
    REGULAR_AGAIN,
    ClearanceRuleAgent,
    GroundTruthEnvironment,
    finalizing_skill_manager,
    reflector_model,
    undone_before_second_answer,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.errors import UsageError
from ace.retrieval import SkillMatcher
from ace.roles import Agent, Reflector
from ace.runners import ACE
from ace.skillbook import COUNTEREXAMPLE, InsightSource, Skillbook
from ace.steps import Sample


class CountingReflector:
    def __init__(self) -> None:
        self.calls = 0
        self._inner = reflector_model()

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.calls += 1
            assert self._inner.function is not None
            return self._inner.function(messages, info)  # type: ignore[return-value]

        return FunctionModel(respond)


def _skillbook_with_the_clearance_rule() -> Skillbook:
    skillbook = Skillbook()
    learned_from = InsightSource(source_system="test", trace_id="t1", sample_question=CLEARANCE)
    skillbook.add_skill(
        "context",
        "Refund request for a purchase bought in the clearance sale",
        ["refund"],
        CLEARANCE_RULE,
        insight_source=learned_from,
    )
    return skillbook


def _loop(
    skillbook: Skillbook,
    agent: ClearanceRuleAgent,
    reflector: CountingReflector,
    model: FunctionModel | None = None,
    **options: object,
) -> ACE:
    return ACE.from_roles(
        agent=Agent(model or agent.model()),
        environment=GroundTruthEnvironment(),
        reflector=Reflector(reflector.model()),
        skill_manager=finalizing_skill_manager(),
        skillbook=skillbook,
        learn_from="failures",
        **options,  # type: ignore[arg-type]
    )


def test_a_task_the_skill_made_wrong_becomes_its_counterexample_and_is_not_learned_from() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent, reflector = ClearanceRuleAgent(everywhere=True), CountingReflector()
    ace = _loop(skillbook, agent, reflector, counterexamples=True)

    [result] = ace.run([Sample(REGULAR, ground_truth="APPROVE", id="regular")])

    assert result.error is None
    assert [CLEARANCE_RULE in prompt for prompt in agent.prompts] == [True, False]  # with the skill, then without
    assert result.output.learning_skipped == (
        "a counterexample of the injected skills: answered wrong with skills ['context-00001'] ('DENY', "
        "reward 0) and right without them ('APPROVE')"
    )
    assert reflector.calls == 0
    [skill] = skillbook.skills()
    assert skill.counterexample_questions == (REGULAR,) and skill.learned_from_questions == (CLEARANCE,)
    record = skill.occurrences[-1]
    assert (record.operation_type, record.relation, record.sample_question) == ("TAG", COUNTEREXAMPLE, REGULAR)
    assert skill.harmful_count == 1


def test_a_skill_undone_and_its_id_reused_while_the_agent_answers_again_gets_no_counterexample() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent = ClearanceRuleAgent(everywhere=True)
    model = undone_before_second_answer(skillbook, agent.model())
    ace = _loop(skillbook, agent, CountingReflector(), model, counterexamples=True)

    [result] = ace.run([Sample(REGULAR, ground_truth="APPROVE", id="regular")])

    assert result.error is None and len(agent.prompts) == 2
    [other] = skillbook.skills()
    assert other.id == "context-00001" and other.issue == "Dates"
    assert other.harmful_count == 0 and other.counterexample_questions == ()


def test_without_the_check_the_same_failure_is_reflected_on_and_no_counterexample_is_kept() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent, reflector = ClearanceRuleAgent(everywhere=True), CountingReflector()

    [result] = _loop(skillbook, agent, reflector).run([Sample(REGULAR, ground_truth="APPROVE", id="regular")])

    assert result.error is None and result.output.learning_skipped is None
    assert len(agent.prompts) == 1 and reflector.calls == 1
    assert skillbook.skills()[0].counterexample_questions == ()


def test_a_task_wrong_with_and_without_the_skill_is_learned_from_as_usual() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent, reflector = ClearanceRuleAgent(everywhere=True), CountingReflector()
    ace = _loop(skillbook, agent, reflector, counterexamples=True)

    [result] = ace.run([Sample(REGULAR, ground_truth="ESCALATE", id="regular")])

    assert result.error is None and result.output.learning_skipped is None
    assert len(agent.prompts) == 2 and reflector.calls == 1
    assert skillbook.skills()[0].counterexample_questions == () and skillbook.skills()[0].harmful_count == 0


def test_a_right_answer_or_one_without_skills_is_not_answered_again() -> None:
    agent, reflector = ClearanceRuleAgent(everywhere=True), CountingReflector()
    ace = _loop(_skillbook_with_the_clearance_rule(), agent, reflector, counterexamples=True)
    ace.run([Sample(CLEARANCE, ground_truth="DENY", id="clearance")])
    assert len(agent.prompts) == 1

    empty_agent = ClearanceRuleAgent(everywhere=True)
    [result] = _loop(Skillbook(), empty_agent, CountingReflector(), counterexamples=True).run(
        [Sample(REGULAR, ground_truth="ESCALATE", id="regular")]
    )
    assert len(empty_agent.prompts) == 1 and result.output.learning_skipped is None


def test_after_a_counterexample_the_matcher_withholds_the_skill_from_a_task_like_it_only() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    matcher = SkillMatcher(skillbook)
    assert [m.skill_id for m in matcher.match(REGULAR_AGAIN)] == ["context-00001"]  # the neighbour gets it at first
    agent = ClearanceRuleAgent(everywhere=True)
    ace = _loop(skillbook, agent, CountingReflector(), counterexamples=True, matcher=matcher)

    results = ace.run(
        [
            Sample(REGULAR, ground_truth="APPROVE", id="regular"),
            Sample(REGULAR_AGAIN, ground_truth="APPROVE", id="regular-again"),
        ]
    )

    assert [result.error for result in results] == [None, None]
    assert results[1].output.injected_skill_ids == () and results[1].output.agent_output.answer == "APPROVE"
    explanation = matcher.explain(REGULAR_AGAIN)
    assert explanation.matches == () and [m.skill_id for m in explanation.withheld] == ["context-00001"]
    assert [m.skill_id for m in matcher.match(CLEARANCE_AGAIN)] == ["context-00001"]


@pytest.mark.parametrize("check", ["counterexamples", "confirmations"])
def test_the_checks_without_an_environment_are_refused(check: str) -> None:
    with pytest.raises(UsageError, match=f"{check} needs an environment"):
        ACE.from_roles(
            agent=Agent(ClearanceRuleAgent(everywhere=True).model()),
            reflector=Reflector(reflector_model()),
            skill_manager=finalizing_skill_manager(),
            **{check: True},  # type: ignore[arg-type]
        )


def test_a_check_after_training_records_the_counterexamples_and_learns_nothing_else() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent, reflector = ClearanceRuleAgent(everywhere=True), CountingReflector()
    ace = _loop(skillbook, agent, reflector, counterexamples=True)

    results = ace.validate(
        [Sample(REGULAR, ground_truth="APPROVE", id="regular"), Sample(CLEARANCE, ground_truth="DENY", id="clearance")]
    )

    assert [result.error for result in results] == [None, None]
    assert [result.output.learning_skipped is not None for result in results] == [True, False]
    assert reflector.calls == 0
    [skill] = skillbook.skills()
    assert skill.counterexample_questions == (REGULAR,) and len(skill.occurrences) == 2


def test_a_check_needs_a_loop_built_for_counterexamples() -> None:
    ace = _loop(_skillbook_with_the_clearance_rule(), ClearanceRuleAgent(everywhere=True), CountingReflector())

    with pytest.raises(UsageError, match=r"counterexamples=True\) or \(confirmations=True"):
        ace.validate([Sample(REGULAR, ground_truth="APPROVE")])
