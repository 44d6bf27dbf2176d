"""ACE.from_roles end to end with FunctionModel-driven roles: injection, counters, provenance,
error isolation, and the epoch barrier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loop_roles import agent_model

from ace.roles import Agent, AgentOutput
from ace.runners import ACE
from ace.skillbook import Skillbook
from ace.steps import EnvironmentResult, Sample

QUESTIONS = ("capital of France?", "boiling point of water?", "square root of 81?")


class CountingEnvironment:
    """Feedback that says whether the answer was 42."""

    def evaluate(self, sample: Sample, agent_output: AgentOutput) -> EnvironmentResult:
        correct = agent_output.answer == (sample.ground_truth or "42")
        return EnvironmentResult(feedback="correct" if correct else "wrong", metrics={"correct": float(correct)})


def _samples() -> list[Sample]:
    return [Sample(question=q, ground_truth="42", id=f"q{i}") for i, q in enumerate(QUESTIONS)]


def test_learned_skills_are_injected_tagged_and_traced_to_their_samples(roles: dict[str, Any]) -> None:
    ace = ACE.from_roles(**roles, environment=CountingEnvironment())

    results = ace.run(_samples(), epochs=2)

    assert [r.error for r in results] == [None] * 6
    first, second = results[:3], results[3:]
    assert all(r.output.injected_skill_ids == () for r in first)
    learned = [skill.id for skill in ace.skillbook.skills()[:3]]
    # Epoch 2 sees every epoch-1 skill; a skill its own earlier samples added may come on top
    # (learning runs behind the agent within an epoch).
    assert all(r.output.injected_skill_ids[:3] == tuple(learned) for r in second)
    skills = {skill.id: skill for skill in ace.skillbook.skills()}
    for skill_id in learned:
        assert skills[skill_id].used_count == 3
        assert skills[skill_id].helpful_count == 3
    tagged = [op for r in second for op in r.output.skill_manager_output.operations if op.type == "TAG"]
    assert sorted(op.skill_id for op in tagged if op.skill_id in learned) == sorted(learned * 3)
    for skill_id in learned:
        adds = [o for o in skills[skill_id].occurrences if o.operation_type == "ADD"]
        assert len(adds) == 1
        assert adds[0].trace_uid.startswith("ace:q")
        assert adds[0].epoch == 1
    epoch_two_uids = {o.trace_uid for o in skills[learned[0]].occurrences if o.operation_type == "TAG"}
    assert epoch_two_uids == {"ace:q0", "ace:q1", "ace:q2"}
    assert {o.epoch for o in skills[learned[0]].occurrences if o.operation_type == "TAG"} == {2}


def test_a_failing_sample_is_recorded_and_the_others_still_learn(roles: dict[str, Any]) -> None:
    roles["agent"] = Agent(agent_model(fail_on="boiling"))
    ace = ACE.from_roles(**roles, environment=CountingEnvironment())

    results = ace.run(_samples(), workers=2)

    assert [r.failed_at for r in results] == [None, "AgentStep", None]
    assert "failed on purpose" in str(results[1].error)
    assert results[0].output.skill_manager_output is not None
    assert results[2].output.skill_manager_output is not None
    assert len(ace.skillbook.skills()) == 2


class RecordingAgent:
    """Wraps an Agent and records how many skills the skillbook held at each answer."""

    def __init__(self, agent: Agent, skillbook: Skillbook) -> None:
        self._agent = agent
        self._skillbook = skillbook
        self.seen: list[int] = []

    async def answer(self, question: str, **kwargs: Any) -> AgentOutput:
        self.seen.append(len(self._skillbook))
        return await self._agent.answer(question, **kwargs)


def test_each_epoch_starts_after_the_previous_epochs_learning_finished(roles: dict[str, Any]) -> None:
    skillbook = Skillbook()
    recording = RecordingAgent(roles.pop("agent"), skillbook)
    ace = ACE.from_roles(agent=recording, skillbook=skillbook, **roles)

    ace.run(_samples(), epochs=3, workers=3)

    assert recording.seen[3:6] == [3, 3, 3]
    assert recording.seen[6:9] == [6, 6, 6]


def test_checkpoints_are_written_every_n_samples(roles: dict[str, Any], tmp_path: Path) -> None:
    ace = ACE.from_roles(**roles, checkpoint_dir=tmp_path, checkpoint_interval=2)

    ace.run(_samples(), epochs=2)

    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "checkpoint_2.json",
        "checkpoint_4.json",
        "checkpoint_6.json",
        "latest.json",
    ]
    # Learning runs behind the checkpoint step: the 2nd sample's checkpoint may include the 3rd's skill.
    assert 2 <= len(Skillbook.load_from_file(tmp_path / "checkpoint_2.json")) <= 3
    assert len(Skillbook.load_from_file(tmp_path / "latest.json")) == 6


def test_a_single_string_of_samples_is_rejected_not_split_into_characters(roles: dict[str, Any]) -> None:
    ace = ACE.from_roles(**roles)

    with pytest.raises(TypeError, match=r"not one string; pass \['capital of France\?'\]"):
        ace.run("capital of France?")
    assert len(ace.skillbook) == 0


async def test_run_async_learns_on_the_callers_loop_and_run_refuses_inside_it(roles: dict[str, Any]) -> None:
    from ace.pipeline import PipelineError

    ace = ACE.from_roles(**roles)

    results = await ace.run_async(_samples(), epochs=2)

    assert [r.error for r in results] == [None] * 6
    assert len(ace.skillbook.skills()) == 6
    with pytest.raises(PipelineError, match=r"ace\.run_async"):
        ace.run(_samples())
