"""How skills reach the agent in the loop (policies, what is counted), what an agent adds to the trace,
the outcome the SkillManager is shown, evaluation without learning, and per-epoch callbacks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from loop_roles import user_prompt
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from test_ace_loop import CountingEnvironment, _samples

from ace.pipeline import SampleResult
from ace.roles import AgentOutput, InjectedSkills, Sample, SkillManager, SkillSource
from ace.runners import ACE
from ace.skillbook import Skill, Skillbook
from ace.steps import EnvironmentResult


def _book() -> Skillbook:
    book = Skillbook()
    book.add_skill("context", "Questions about capitals of countries.", ["geography"], "Name the capital city.")
    book.add_skill("context", "Questions about boiling points.", ["physics"], "Give the value at sea level.")
    return book


class SourceAgent:
    """An agent that asks its SkillSource for the skills of its question (reading one in tool mode)
    and adds a transcript to the trace; `claim` makes it report ids it was never given."""

    def __init__(self, claim: tuple[str, ...] = ()) -> None:
        self.claim = claim
        self.samples: list[Sample | None] = []

    async def answer(
        self,
        question: str,
        *,
        context: str = "",
        skills: Sequence[Skill] | InjectedSkills | SkillSource = (),
        sample: Sample | None = None,
    ) -> AgentOutput:
        assert isinstance(skills, SkillSource)
        self.samples.append(sample)
        injected = await skills.for_task(question)
        if skills.injection == "tool":
            first = re.search(r"\[(context-\d+)\]", injected.text)
            if first:
                skills.read(first.group(1))
        return AgentOutput(
            answer="42",
            reasoning="",
            injected_skill_ids=self.claim or skills.used_skill_ids,
            trace_fields={"transcript": [{"role": "user", "content": question}]},
        )


def test_all_policy_counts_every_active_skill_once_per_sample(roles: dict[str, Any]) -> None:
    book = _book()
    roles["agent"] = SourceAgent()
    ace = ACE.from_roles(**roles, skillbook=book, skill_injection="all")

    results = ace.evaluate(_samples())

    assert all(r.output.injected_skill_ids == ("context-00001", "context-00002") for r in results)
    assert [s.used_count for s in book.skills()] == [3, 3]
    assert len(book) == 2  # evaluate never learns


def test_tool_policy_counts_only_the_skills_read(roles: dict[str, Any]) -> None:
    book = _book()
    roles["agent"] = SourceAgent()
    ace = ACE.from_roles(**roles, skillbook=book, skill_injection="tool")

    results = ace.evaluate(_samples()[:2])

    assert all(r.output.injected_skill_ids == ("context-00001",) for r in results)
    assert [s.used_count for s in book.skills()] == [2, 0]


def test_an_agent_claiming_skills_it_was_never_given_fails_the_sample(roles: dict[str, Any]) -> None:
    book = _book()
    roles["agent"] = SourceAgent(claim=("context-00002",))
    ace = ACE.from_roles(**roles, skillbook=book, skill_injection="tool")

    results = ace.evaluate(_samples()[:1])

    assert results[0].failed_at == "AgentStep"
    assert "never handed them out" in str(results[0].error)
    assert book.get_skill("context-00002").used_count == 0


def test_the_agent_gets_its_sample_and_its_trace_fields_reach_the_trace(roles: dict[str, Any]) -> None:
    agent = SourceAgent()
    roles["agent"] = agent
    ace = ACE.from_roles(**roles, environment=CountingEnvironment())

    results = ace.evaluate(_samples()[:1])

    assert agent.samples == [_samples()[0]]
    trace = results[0].output.trace
    assert trace["transcript"] == [{"role": "user", "content": "capital of France?"}]
    assert trace["feedback"] == "correct"


def test_trace_fields_may_not_hide_the_environments_verdict(roles: dict[str, Any]) -> None:
    class Overwriting(SourceAgent):
        async def answer(self, question: str, **kwargs: Any) -> AgentOutput:
            output = await super().answer(question, **kwargs)
            return AgentOutput(output.answer, "", output.injected_skill_ids, trace_fields={"feedback": "correct"})

    roles["agent"] = Overwriting()
    results = ACE.from_roles(**roles, environment=CountingEnvironment()).evaluate(_samples()[:1])

    assert results[0].failed_at == "EvaluateStep" and "['feedback']" in str(results[0].error)


def test_a_matched_policy_needs_a_matcher_at_construction(roles: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="a matcher is needed for injection='matched'"):
        ACE.from_roles(**roles, skill_injection="matched")


def test_the_skill_manager_is_shown_the_outcome_next_to_the_injected_skills(
    roles: dict[str, Any], embedder: Any
) -> None:
    prompts: list[str] = []

    def finalize_at_once(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append(user_prompt(messages))
        return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "nothing new"})])

    roles["skill_manager"] = SkillManager(FunctionModel(finalize_at_once), embedder=embedder)
    ace = ACE.from_roles(**roles, skillbook=_book(), environment=CountingEnvironment())

    results = ace.run(_samples()[:1])

    outcome = re.search(r"<outcome>\n(.*?)\n</outcome>\s*<injected_skills>", prompts[0], re.S)
    assert outcome is not None and outcome.group(1) == "correct"
    output = results[0].output.skill_manager_output
    assert output.finished and output.operations == ()


def test_on_epoch_end_runs_after_each_epochs_learning(roles: dict[str, Any]) -> None:
    ace = ACE.from_roles(**roles)
    seen: list[tuple[int, int, int]] = []

    def record(epoch: int, results: list[SampleResult]) -> None:
        seen.append((epoch, len(results), len(ace.skillbook)))

    ace.run(_samples(), epochs=2, on_epoch_end=record)

    assert seen == [(1, 3, 3), (2, 3, 6)]


def test_environment_result_metrics_reach_the_trace(roles: dict[str, Any]) -> None:
    class Scored:
        def evaluate(self, sample: Sample, agent_output: AgentOutput) -> EnvironmentResult:
            return EnvironmentResult(feedback="reward 1", metrics={"reward": 1.0})

    results = ACE.from_roles(**roles, environment=Scored()).evaluate(_samples()[:1])

    assert results[0].output.trace["metrics"] == {"reward": 1.0}
