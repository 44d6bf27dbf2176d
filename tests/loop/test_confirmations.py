"""`ACE.from_roles(confirmations=True)` and `retire_unconfirmed`: a task the injected skills made right,
and that the agent gets wrong without them, confirms them; a lesson no second task backs is retired."""

from __future__ import annotations

import pytest
from loop_roles import (
    CLEARANCE,
    CLEARANCE_AGAIN,
    CLEARANCE_RULE,
    REGULAR,
    ClearanceRuleAgent,
    GroundTruthEnvironment,
    finalizing_skill_manager,
    reflector_model,
    undone_before_second_answer,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.errors import UsageError
from ace.roles import Agent, Reflector
from ace.runners import ACE
from ace.skillbook import CONFIRMATION, InsightSource, Skillbook
from ace.steps import Sample, retire_unconfirmed


def _source(trace_id: str, question: str, relation: str | None = None) -> InsightSource:
    return InsightSource(source_system="test", trace_id=trace_id, sample_question=question, relation=relation)


def _skillbook_with_the_clearance_rule() -> Skillbook:
    skillbook = Skillbook()
    skillbook.add_skill(
        "context",
        "Refund request for a purchase bought in the clearance sale",
        ["refund"],
        CLEARANCE_RULE,
        insight_source=InsightSource(source_system="ace", trace_id="t1", sample_question=CLEARANCE),
    )
    return skillbook  # learned from the loop's trace of Sample(CLEARANCE, id="t1")


def _loop(
    skillbook: Skillbook, agent: ClearanceRuleAgent, model: FunctionModel | None = None, **options: object
) -> ACE:
    return ACE.from_roles(
        agent=Agent(model or agent.model()),
        environment=GroundTruthEnvironment(),
        reflector=Reflector(reflector_model()),
        skill_manager=finalizing_skill_manager(),
        skillbook=skillbook,
        learn_from="failures",
        **options,  # type: ignore[arg-type]
    )


def test_a_task_the_skill_made_right_and_that_fails_without_it_confirms_the_skill() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent = ClearanceRuleAgent(everywhere=False)

    [result] = _loop(skillbook, agent, confirmations=True).run([Sample(CLEARANCE_AGAIN, ground_truth="DENY", id="c2")])

    assert result.error is None and result.output.agent_output.answer == "DENY"
    assert [CLEARANCE_RULE in prompt for prompt in agent.prompts] == [True, False]  # with the skill, then without
    [skill] = skillbook.skills()
    record = skill.occurrences[-1]
    assert (record.operation_type, record.relation, record.sample_question) == ("TAG", CONFIRMATION, CLEARANCE_AGAIN)
    assert record.learning_text == (
        "answered right with skills ['context-00001'] ('DENY') and wrong without them ('APPROVE', reward 0)"
    )
    assert skill.helpful_count == 1 and len(skill.backing_trace_uids) == 2
    assert skill.backing_trace_uids[1] == record.trace_uid


def test_a_trace_that_already_backs_the_skill_is_not_answered_again() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    _loop(skillbook, ClearanceRuleAgent(everywhere=False), confirmations=True).run(
        [Sample(CLEARANCE_AGAIN, ground_truth="DENY", id="c2")]
    )
    agent = ClearanceRuleAgent(everywhere=False)

    _loop(skillbook, agent, confirmations=True).run([Sample(CLEARANCE_AGAIN, ground_truth="DENY", id="c2")])

    assert len(agent.prompts) == 1
    assert skillbook.skills()[0].helpful_count == 1


def test_a_task_right_with_and_without_the_skill_or_wrong_with_it_confirms_nothing() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent = ClearanceRuleAgent(everywhere=False)

    results = _loop(skillbook, agent, confirmations=True).run(
        [Sample(REGULAR, ground_truth="APPROVE", id="regular"), Sample(CLEARANCE_AGAIN, ground_truth="ESCALATE")]
    )

    assert [result.error for result in results] == [None, None]
    assert len(agent.prompts) == 3  # the right answer once more without the skill; the wrong one not
    [skill] = skillbook.skills()
    assert skill.helpful_count == 0 and len(skill.backing_trace_uids) == 1


def test_a_skill_undone_and_its_id_reused_while_the_agent_answers_again_is_not_confirmed() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent = ClearanceRuleAgent(everywhere=False)
    model = undone_before_second_answer(skillbook, agent.model())

    [result] = _loop(skillbook, agent, model, confirmations=True).run(
        [Sample(CLEARANCE_AGAIN, ground_truth="DENY", id="c2")]
    )

    assert result.error is None and len(agent.prompts) == 2
    [other] = skillbook.skills()
    assert other.id == "context-00001" and other.issue == "Dates"
    assert other.helpful_count == 0 and other.backing_trace_uids == ("test:t9",)


def test_without_confirmations_a_right_answer_is_not_answered_again() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent = ClearanceRuleAgent(everywhere=False)

    _loop(skillbook, agent).run([Sample(CLEARANCE_AGAIN, ground_truth="DENY", id="c2")])

    assert len(agent.prompts) == 1 and len(skillbook.skills()[0].backing_trace_uids) == 1


def test_validate_after_training_records_confirmations_and_learns_nothing_else() -> None:
    skillbook = _skillbook_with_the_clearance_rule()
    agent = ClearanceRuleAgent(everywhere=False)
    calls: list[str] = []

    def reflect(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append("reflect")
        raise AssertionError("validate must not reflect")

    ace = ACE.from_roles(
        agent=Agent(agent.model()),
        environment=GroundTruthEnvironment(),
        reflector=Reflector(FunctionModel(reflect)),
        skill_manager=finalizing_skill_manager(),
        skillbook=skillbook,
        confirmations=True,
    )

    results = ace.validate(
        [Sample(CLEARANCE_AGAIN, ground_truth="DENY", id="c2"), Sample(CLEARANCE, ground_truth="DENY", id="t1")]
    )

    assert [result.error for result in results] == [None, None]
    assert [result.output.learning_skipped for result in results] == [None, None]
    assert calls == []
    assert len(agent.prompts) == 3  # the task it was learned from is not answered again without it
    assert skillbook.skills()[0].backing_trace_uids == ("ace:t1", "ace:c2")


def test_retire_unconfirmed_keeps_lessons_two_tasks_back_and_hand_made_skills() -> None:
    skillbook = Skillbook()
    once = skillbook.add_skill(
        "context", "Clearance refunds", ["refund"], CLEARANCE_RULE, insight_source=_source("t1", CLEARANCE)
    )
    confirmed = skillbook.add_skill("context", "Dates", ["date"], "Use YYYY.MM.DD.", insight_source=_source("t2", "q2"))
    skillbook.tag_skill(confirmed.id, 1, insight_source=_source("t3", "q3", CONFIRMATION))
    updated = skillbook.add_skill("context", "Weights", ["weight"], "Use grams.", insight_source=_source("t4", "q4"))
    skillbook.update_skill(updated.id, insight="Use whole grams.", insight_source=_source("t5", "q5"))
    praised = skillbook.add_skill(
        "context", "Names", ["name"], "Use the family name.", insight_source=_source("t6", "q6")
    )
    skillbook.tag_skill(praised.id, 1, insight_source=_source("t7", "q7"))
    hand_made = skillbook.add_skill("context", "Invoices", ["invoice"], "Write INV/<year>/<number>.")

    retired = retire_unconfirmed(skillbook)

    assert [skill.id for skill in retired] == [once.id, praised.id]
    assert {skill.id for skill in skillbook.skills()} == {confirmed.id, updated.id, hand_made.id}
    retired_skill = skillbook.get_skill(once.id)
    assert retired_skill is not None and not retired_skill.active
    assert retired_skill.occurrences[-1].operation_type == "REMOVE"
    assert retired_skill.occurrences[-1].learning_text == (
        "not confirmed: backed by 1 task(s) ['test:t1'], fewer than 2; a lesson must also fix a task it was "
        "not learned from"
    )
    assert [skill.id for skill in retire_unconfirmed(skillbook, min_tasks=3)] == [confirmed.id, updated.id]


def test_retire_unconfirmed_needs_at_least_one_task() -> None:
    with pytest.raises(UsageError, match="min_tasks must be at least 1"):
        retire_unconfirmed(Skillbook(), min_tasks=0)
