"""Run one simulated conversation as upstream tau2's half-duplex orchestrator does.

The agent greets with "Hi! How can I help you today?"; then each step delivers the last message:
to the user simulator (agent text), to the agent (user text or tool results), or to the environment
(the agent's tool calls, all answered in one step; the few tools the agent answers itself, such as
`read_skill`, are answered by the agent in the same step). Every step counts toward `max_steps`; every
tool error counts toward `max_errors`; both limits are checked only when no tool call is pending.
The simulated user ends the run with a stop token (`user_stop`); the upstream LLM agent never stops
on its own. An empty agent or user message ends the run as `agent_error` / `user_error`.
Model exceptions propagate to the caller (see `runner.run_tasks`, which records them).
"""

from __future__ import annotations

import time
import uuid
from typing import Literal

from ace import tracing
from ace.errors import UsageError
from ace_eval.tau2.agent import LLMAgent
from ace_eval.tau2.environment import AirlineEnvironment
from ace_eval.tau2.errors import UnsupportedTaskError
from ace_eval.tau2.evaluator import evaluate_simulation
from ace_eval.tau2.results import (
    AssistantMessage,
    Message,
    SimulationRun,
    TerminationReason,
    ToolCall,
    UserMessage,
    now_iso,
)
from ace_eval.tau2.tasks import Task
from ace_eval.tau2.user_simulator import UserSimulator, is_user_stop

__all__ = ["DEFAULT_MAX_ERRORS", "DEFAULT_MAX_STEPS", "GREETING", "run_simulation"]

GREETING = "Hi! How can I help you today?"
"""Upstream's fixed first agent message."""
DEFAULT_MAX_STEPS = 200
"""Upstream's default step budget for airline runs."""
DEFAULT_MAX_ERRORS = 10
"""Upstream's default tool-error budget."""

_Role = Literal["agent", "user", "env"]


async def run_simulation(
    task: Task,
    *,
    agent: LLMAgent,
    user: UserSimulator,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    trial: int = 0,
    seed: int | None = None,
) -> SimulationRun:
    """Simulate `task` with `agent` and `user` on a fresh database and return the graded run.

    `user` must have been built with `task.user_scenario`. Raises `UnsupportedTaskError` for a task
    with an initial state; model errors propagate.
    """
    if task.initial_state is not None:
        raise UnsupportedTaskError(f"task {task.id}: tasks with an initial_state are not supported")
    if max_steps < 1 or max_errors < 1:
        raise UsageError(f"max_steps ({max_steps}) and max_errors ({max_errors}) must be at least 1")
    with tracing.span(f"tau2.simulation {task.id} trial {trial}", task_id=task.id, trial=trial) as span:
        start_time, started = now_iso(), time.perf_counter()
        trajectory: list[Message] = [AssistantMessage(content=GREETING, cost=0.0, timestamp=start_time)]
        reason, steps = await _converse(agent, user, trajectory, max_steps=max_steps, max_errors=max_errors)
        for index, message in enumerate(trajectory):
            message.turn_idx = index
        run = SimulationRun(
            id=str(uuid.uuid4()),
            task_id=task.id,
            timestamp=now_iso(),
            start_time=start_time,
            end_time=now_iso(),
            duration=time.perf_counter() - started,
            termination_reason=reason,
            agent_cost=_total_cost(trajectory, "assistant"),
            user_cost=_total_cost(trajectory, "user"),
            messages=trajectory,
            trial=trial,
            seed=seed,
        )
        run.reward_info = evaluate_simulation(task, run.messages, reason)
        span.set_attributes({"termination_reason": reason, "reward": run.reward_info.reward, "steps": steps})
        return run


async def _converse(
    agent: LLMAgent, user: UserSimulator, trajectory: list[Message], *, max_steps: int, max_errors: int
) -> tuple[TerminationReason, int]:
    """Pass the turn between user, agent and a fresh environment, appending every message to
    `trajectory`, until one of upstream's termination reasons; returns it and the steps taken."""
    environment = AirlineEnvironment()
    sender: _Role = "agent"
    receiver: _Role = "user"
    steps = errors = 0
    reason: TerminationReason | None = None
    pending_calls: list[ToolCall] = []  # the agent's last tool calls, which the environment answers next
    while reason is None:
        if receiver == "user":
            user_message = await user.next_message(trajectory)
            trajectory.append(user_message)
            sender, receiver = "user", "agent"
            if not user_message.has_text():
                reason = "user_error"
            elif is_user_stop(user_message):
                reason = "user_stop"
        elif receiver == "agent":
            agent_message = await agent.next_message(trajectory)
            trajectory.append(agent_message)
            pending_calls = agent_message.tool_calls or []
            sender, receiver = "agent", ("env" if pending_calls else "user")
            if not pending_calls and not agent_message.has_text():
                reason = "agent_error"
        else:
            for call in pending_calls:
                answer = agent.call_own_tool(call) if agent.owns_tool(call.name) else environment.call(call)
                errors += answer.error
                trajectory.append(answer)
            sender, receiver = "env", sender
        steps += 1
        if receiver != "env":
            if steps >= max_steps:
                reason = "max_steps"
            if errors >= max_errors:
                reason = "too_many_errors"
    return reason, steps


def _total_cost(trajectory: list[Message], role: Literal["assistant", "user"]) -> float | None:
    """The summed cost of `role`'s messages; None when any of them has no cost."""
    total = 0.0
    for message in trajectory:
        if not isinstance(message, (AssistantMessage, UserMessage)) or message.role != role:
            continue
        if message.cost is None:
            return None
        total += message.cost
    return total
