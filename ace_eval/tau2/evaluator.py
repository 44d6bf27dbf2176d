"""Upstream's airline grader: reward = DB match x COMMUNICATE, 0 unless a user or agent stop.

- DB: replay the trajectory's write calls on a fresh DB and the task's gold actions on another;
  compare upstream's DB hashes. The gold hash is cached per distinct list of gold actions.
- COMMUNICATE: each `communicate_info` string occurs in some agent text,
  `info.lower() in content.lower().replace(",", "")`.
- Action checks (does each gold call appear in the trajectory) are diagnostics unless a task lists
  ACTION in its reward basis.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from ace_eval.tau2.environment import WRITE_TOOLS, AirlineEnvironment, tool_calls_of
from ace_eval.tau2.errors import UnsupportedTaskError
from ace_eval.tau2.results import (
    ActionCheck,
    CommunicateCheck,
    DBCheck,
    Message,
    RewardInfo,
    TerminationReason,
)
from ace_eval.tau2.tasks import Action, Task

__all__ = ["REWARDED_TERMINATIONS", "evaluate_simulation", "gold_db_hash", "initial_db_hash", "trajectory_db_hash"]

REWARDED_TERMINATIONS: frozenset[str] = frozenset({"user_stop", "agent_stop"})
"""Termination reasons that can earn a reward; any other ending scores 0 without grading."""

_SUPPORTED_BASIS = frozenset({"DB", "COMMUNICATE", "ACTION"})


@cache
def initial_db_hash() -> str:
    """The DB hash of the pristine database."""
    return AirlineEnvironment().db_hash()


@cache
def _replayed_hash(calls_json: str) -> str:
    environment = AirlineEnvironment()
    environment.replay((name, arguments) for name, arguments in json.loads(calls_json))
    return environment.db_hash()


def _hash_after(calls: Sequence[tuple[str, dict[str, Any]]]) -> str:
    if not calls:
        return initial_db_hash()
    return _replayed_hash(json.dumps(calls, sort_keys=True))


def gold_db_hash(task: Task) -> str:
    """The DB hash after replaying the task's gold actions on a fresh DB (failing actions are skipped)."""
    actions: list[Action] = (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []
    return _hash_after([(action.name, action.arguments) for action in actions])


def trajectory_db_hash(messages: Sequence[Message]) -> str:
    """The DB hash after replaying a trajectory's write calls on a fresh DB."""
    writes = [(call.name, call.arguments) for call in tool_calls_of(messages) if call.name in WRITE_TOOLS]
    return _hash_after(writes)


def evaluate_simulation(task: Task, messages: Sequence[Message], termination_reason: TerminationReason) -> RewardInfo:
    """Grade one simulation of `task` the way upstream tau2 grades airline runs.

    Raises `UnsupportedTaskError` for a task with an initial state or a reward basis other than
    DB / COMMUNICATE / ACTION (no airline task has either).
    """
    if termination_reason not in REWARDED_TERMINATIONS:
        return RewardInfo(
            reward=0.0,
            info={"note": f"Simulation terminated prematurely. Termination reason: {termination_reason}"},
        )
    if task.initial_state is not None:
        raise UnsupportedTaskError(f"task {task.id}: tasks with an initial_state are not supported")
    criteria = task.evaluation_criteria
    if criteria is None:
        return RewardInfo(reward=1.0, info={"note": "No evaluation criteria"})
    unsupported = set(criteria.reward_basis) - _SUPPORTED_BASIS
    if unsupported:
        raise UnsupportedTaskError(f"task {task.id}: reward basis {sorted(unsupported)} is not supported")

    db_match = trajectory_db_hash(messages) == gold_db_hash(task)
    db_reward = 1.0 if db_match else 0.0
    communicate_checks = _communicate_checks(criteria.communicate_info or [], messages)
    communicate_reward = 1.0 if all(check.met for check in communicate_checks) else 0.0
    action_checks = _action_checks(criteria.actions or [], messages)
    action_reward = 1.0 if all(check.action_match for check in action_checks) else 0.0

    components = {"DB": db_reward, "COMMUNICATE": communicate_reward, "ACTION": action_reward}
    breakdown: dict[str, float] = {basis: components[basis] for basis in criteria.reward_basis}
    reward = 1.0
    for value in breakdown.values():
        reward *= value
    return RewardInfo(
        reward=reward,
        db_check=DBCheck(db_match=db_match, db_reward=db_reward),
        env_assertions=[],
        action_checks=action_checks or None,
        communicate_checks=communicate_checks or None,
        reward_basis=list(criteria.reward_basis),
        reward_breakdown=breakdown,
        info={
            "env": None,
            "nl": None,
            "communicate": None if communicate_checks else {"note": "No communicate_info to evaluate"},
            "action": None if action_checks else {"note": "No actions to evaluate"},
        },
    )


def _communicate_checks(infos: Sequence[str], messages: Sequence[Message]) -> list[CommunicateCheck]:
    texts = [
        message.content
        for message in messages
        if message.role == "assistant" and message.content is not None and message.has_text()
    ]
    checks = []
    for info in infos:
        said_in = next((text for text in texts if info.lower() in text.lower().replace(",", "")), None)
        justification = (
            f"Information '{info}' not communicated."
            if said_in is None
            else f"Information '{info}' communicated in the message:\n '{said_in}'"
        )
        checks.append(CommunicateCheck(info=info, met=said_in is not None, justification=justification))
    return checks


def _action_checks(actions: Sequence[Action], messages: Sequence[Message]) -> list[ActionCheck]:
    calls = tool_calls_of(messages)
    checks = []
    for action in actions:
        matched = any(action.matches(call.name, call.arguments) for call in calls)
        checks.append(ActionCheck(action=action, action_match=matched, action_reward=1.0 if matched else 0.0))
    return checks
