"""`learn_from`: which samples the learning tail reflects on, driven through `ACE.from_roles`."""

from __future__ import annotations

import re
from typing import Any

import pytest
from loop_roles import GroundTruthEnvironment, reflector_model, user_prompt
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.errors import UsageError
from ace.roles import Reflector
from ace.runners import ACE
from ace.steps import Sample
from ace.traces import trace_reward


def _recording_reflector(reflected: list[str]) -> Reflector:
    """A Reflector whose model notes the question of every trace it is asked about."""
    inner = reflector_model()

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        question = re.search(r"<question>\s*(.*?)\s*</question>", user_prompt(messages), re.S)
        reflected.append(question.group(1) if question else "")
        return inner.function(messages, info)  # type: ignore[misc,return-value]

    return Reflector(FunctionModel(respond))


def _samples() -> list[Sample]:
    # The agent of loop_roles answers "42": right on the first sample, wrong on the second.
    return [
        Sample("meaning of life?", ground_truth="42", id="right"),
        Sample("six times nine?", ground_truth="54", id="wrong"),
    ]


def _run(roles: dict[str, Any], learn_from: str, epochs: int) -> tuple[list[str], list[Any]]:
    reflected: list[str] = []
    ace = ACE.from_roles(
        **{**roles, "reflector": _recording_reflector(reflected)},
        environment=GroundTruthEnvironment(),
        learn_from=learn_from,  # type: ignore[typeddict-item]
    )
    results = ace.run(_samples(), epochs=epochs)
    assert [r.error for r in results] == [None] * len(results)
    return reflected, [r.output for r in results]


def test_failures_skips_a_right_answer_given_unaided_and_learns_from_the_wrong_one(roles: dict[str, Any]) -> None:
    reflected, (right, wrong) = _run(roles, "failures", epochs=1)

    assert reflected == ["six times nine?"]
    assert right.learning_skipped == "a full success with no skill injected (learn_from='failures')"
    assert right.reflections == () and right.skill_manager_output is None
    assert wrong.learning_skipped is None
    assert [op.type for op in wrong.skill_manager_output.operations] == ["ADD"]


def test_failures_still_reflects_on_a_right_answer_made_with_skills_so_they_are_credited(
    roles: dict[str, Any],
) -> None:
    reflected, outputs = _run(roles, "failures", epochs=2)

    right_again = outputs[2]
    assert right_again.injected_skill_ids  # epoch 2 sees the skill learned from the wrong answer
    assert reflected == ["six times nine?", "meaning of life?", "six times nine?"]
    tags = [op for op in right_again.skill_manager_output.operations if op.type == "TAG"]
    assert [op.skill_id for op in tags] == list(right_again.injected_skill_ids)


def test_all_reflects_on_every_sample(roles: dict[str, Any]) -> None:
    reflected, outputs = _run(roles, "all", epochs=1)

    assert reflected == ["meaning of life?", "six times nine?"]
    assert all(output.learning_skipped is None for output in outputs)


def test_an_unknown_learn_from_is_refused_when_the_loop_is_built(roles: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="learn_from must be one of all, failures; got 'successes'"):
        ACE.from_roles(**roles, learn_from="successes")  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("trace", "reward"),
    [
        ({"simulation": {"reward_info": {"reward": 0.0}}, "metrics": {"correct": 1.0}}, 0.0),
        ({"reward_info": {"reward": 1.0}, "termination_reason": "user_stop"}, 1.0),
        ({"metrics": {"reward": 0.5, "correct": 1.0}}, 0.5),
        ({"metrics": {"correct": 1}}, 1.0),
        ({"metrics": {"correct": "yes"}}, None),
        ({"simulation": {"reward_info": {"reward": None}}}, None),
        ({"feedback": "fine"}, None),
        ("not a mapping", None),
    ],
)
def test_trace_reward_reads_the_tau2_reward_before_the_environment_metrics(trace: Any, reward: float | None) -> None:
    assert trace_reward(trace) == reward
