"""tau2-bench `Results` files as traces: one `{"task", "simulation"}` trace per simulation, each
checked for the shape the steps read (messages with roles, reward info, the task's user scenario)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ace.untrusted import UntrustedInputError, quote

__all__ = ["results_traces"]


def results_traces(document: Mapping[str, Any]) -> list[dict[str, Any] | str]:
    """One `{"task", "simulation"}` trace per simulation of a tau2 Results document, or, for a
    simulation that cannot be used, the reason. Raises `UntrustedInputError` (naming the field) when
    the document's `simulations` or `tasks` are not lists of objects."""
    simulations, tasks = document["simulations"], document.get("tasks")
    if not isinstance(simulations, list):
        raise UntrustedInputError(f'"simulations" is not a list: {quote(simulations)}')
    if tasks is None:
        tasks = []
    if not isinstance(tasks, list) or not all(isinstance(task, Mapping) for task in tasks):
        raise UntrustedInputError(f'"tasks" is not a list of task objects: {quote(tasks)}')
    by_id = {key: task for task in tasks if (key := _task_key(task.get("id"))) is not None}
    traces: list[dict[str, Any] | str] = []
    for simulation in simulations:
        problem = _simulation_problem(simulation)
        key = _task_key(simulation.get("task_id")) if problem is None else None
        task = by_id.get(key) if key is not None else None
        if problem is None and task is not None and (task_problem := _task_problem(task)) is not None:
            problem = f"its task {quote(key)} {task_problem}"
        if problem:
            traces.append(problem)
        else:
            traces.append({"task": task, "simulation": simulation})
    return traces


def _simulation_problem(simulation: Any) -> str | None:
    """Why `simulation` is not a usable tau2 simulation (None when it is)."""
    if not isinstance(simulation, Mapping):
        return f"not an object: {quote(simulation)}"
    messages = simulation.get("messages")
    if not isinstance(messages, list):
        return f'"messages" is not a list: {quote(messages)}'
    for number, message in enumerate(messages):
        if not isinstance(message, Mapping):
            return f"message {number} is not an object: {quote(message)}"
        if not isinstance(message.get("role"), str):
            return f'message {number} has no string "role": {quote(message.get("role"))}'
    task_id = simulation.get("task_id")
    if task_id is not None and not isinstance(task_id, (str, int)):
        return f'"task_id" is not a string: {quote(task_id)}'
    reward_info = simulation.get("reward_info")
    if reward_info is not None and not isinstance(reward_info, Mapping):
        return f'"reward_info" is not an object: {quote(reward_info)}'
    db_check = (reward_info or {}).get("db_check")
    if db_check is not None and not isinstance(db_check, Mapping):
        return f'"reward_info.db_check" is not an object: {quote(db_check)}'
    return None


def _task_problem(task: Mapping[str, Any]) -> str | None:
    """Why `task`'s fields that traces are read by are not of their tau2 shape (None when they are):
    the user scenario (an object) and its instructions (an object or text)."""
    scenario = task.get("user_scenario")
    if scenario is None:
        return None
    if not isinstance(scenario, Mapping):
        return f'has a "user_scenario" that is not an object: {quote(scenario)}'
    instructions = scenario.get("instructions")
    if instructions is not None and not isinstance(instructions, (Mapping, str)):
        return f'has "user_scenario.instructions" that are neither an object nor text: {quote(instructions)}'
    return None


def _task_key(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
