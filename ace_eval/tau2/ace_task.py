"""tau2 airline tasks as samples of the ACE loop (`ACE.from_roles(agent=..., environment=...)`).

- `tau2_samples(tasks, trials)`: one `Sample` per (task, trial); the task rides in `metadata`, the
  question is the task's reason for call (what provenance and the Reflector show).
- `Tau2Agent`: the loop's agent. One full simulation per sample - the LLM agent with the learned
  skills its `SkillSource` hands out at the user's first message, the simulated user, the airline
  tools - graded with the upstream reward; the simulation (with the injected ids) lands in the
  trace and, with a `ResultsLog`, in a tau2 Results file as soon as it finishes.
- `Tau2Environment`: the loop's environment. Its feedback is the reward and its breakdown: how the
  run ended, the DB match, the facts communicated, the expected actions missed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from ace.errors import UsageError
from ace.models import RequestSettings
from ace.roles import AgentOutput, InjectedSkills, Sample, SkillSource
from ace.skillbook import Skill
from ace.steps import EnvironmentResult
from ace_eval.tau2.agent import LLMAgent, skills_instructions
from ace_eval.tau2.evaluator import REWARDED_TERMINATIONS
from ace_eval.tau2.metrics import is_success
from ace_eval.tau2.orchestrator import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS, run_simulation
from ace_eval.tau2.results import Results, RewardInfo, SimulationRun, now_iso, write_results
from ace_eval.tau2.runner import trial_seeds
from ace_eval.tau2.tasks import Task
from ace_eval.tau2.user_simulator import UserSimulator

__all__ = ["ResultsLog", "Tau2Agent", "Tau2Environment", "describe_outcome", "reason_for_call", "tau2_samples"]

_ENDINGS = {
    "user_stop": "the simulated user ended the conversation",
    "agent_stop": "the agent ended the conversation",
    "max_steps": "the step limit was reached",
    "too_many_errors": "too many tool calls failed",
    "agent_error": "the agent sent an empty message",
    "user_error": "the simulated user sent an empty message",
}


def reason_for_call(task: Task) -> str:
    """The task's request in the user's words (its scenario's reason for call)."""
    instructions = task.user_scenario.instructions
    return instructions if isinstance(instructions, str) else instructions.reason_for_call


def tau2_samples(tasks: Sequence[Task], *, trials: int = 1, seed: int = 300) -> list[Sample]:
    """One sample per trial per task (trial-major, as upstream runs them), each carrying its task,
    trial and upstream trial seed in `metadata`. Raises ValueError when `trials` < 1."""
    if trials < 1:
        raise UsageError(f"trials must be at least 1, got {trials}")
    seeds = trial_seeds(seed, trials)
    return [
        Sample(
            question=reason_for_call(task),
            id=f"airline-{task.id}-trial-{trial}",
            metadata={"task": task, "trial": trial, "seed": seeds[trial]},
        )
        for trial in range(trials)
        for task in tasks
    ]


class ResultsLog:
    """A tau2 Results file that grows as simulations finish: rewritten atomically after each one,
    so a killed run leaves every simulation it finished."""

    def __init__(self, info: dict[str, Any], tasks: Sequence[Task]) -> None:
        """`info` is the Results file's run configuration; `tasks` the tasks it is graded with."""
        self._info = info
        self._tasks = list(tasks)
        self._lock = threading.Lock()
        self._path: Path | None = None
        self._results = Results(timestamp=now_iso(), info=info, tasks=self._tasks, simulations=[])

    def open(self, path: str | Path) -> None:
        """Start a new, empty Results file at `path` (written at once); later simulations go there."""
        with self._lock:
            self._path = Path(path)
            self._results = Results(timestamp=now_iso(), info=self._info, tasks=self._tasks, simulations=[])
            write_results(self._results, self._path)

    def add(self, simulation: SimulationRun) -> None:
        """Append `simulation` and rewrite the open file (only kept in memory when none is open)."""
        with self._lock:
            self._results.simulations.append(simulation)
            if self._path is not None:
                write_results(self._results, self._path)

    @property
    def results(self) -> Results:
        """The Results of the open file so far."""
        with self._lock:
            return self._results.model_copy()


class Tau2Agent:
    """The ACE loop's agent for tau2: each `answer` runs one whole simulation of the sample's task.

    The sample must come from `tau2_samples` (its metadata holds task, trial and seed). Skills come
    from a `SkillSource` (asked at the user's first message; `tool` mode adds `read_skill`) or as
    fixed skills. Model and tool errors propagate: the loop fails that sample and reports it.
    """

    def __init__(
        self,
        agent_model: Model,
        user_model: Model,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        max_errors: int = DEFAULT_MAX_ERRORS,
        agent_settings: RequestSettings | None = None,
        user_settings: RequestSettings | None = None,
        log: ResultsLog | None = None,
    ) -> None:
        """`agent_settings` / `user_settings` go with every request of the LLM agent / the simulated
        user (default: their `DEFAULT_SETTINGS`). Raises ValueError for `max_steps` or `max_errors`
        below 1."""
        if max_steps < 1 or max_errors < 1:
            raise UsageError(f"max_steps ({max_steps}) and max_errors ({max_errors}) must be at least 1")
        self._agent_model = agent_model
        self._user_model = user_model
        self._max_steps = max_steps
        self._max_errors = max_errors
        self._agent_settings = agent_settings
        self._user_settings = user_settings
        self._log = log

    async def answer(
        self,
        question: str,
        *,
        context: str = "",
        skills: Sequence[Skill] | InjectedSkills | SkillSource = (),
        sample: Sample | None = None,
    ) -> AgentOutput:
        """Simulate the sample's task once, the trial's seed sent with every agent and user request;
        the output's `trace_fields` hold the task and the graded simulation, `injected_skill_ids` the
        skills injected or read. Raises ValueError for a sample without tau2 metadata."""
        task, trial, seed = _task_of(sample)
        agent_settings = (self._agent_settings or LLMAgent.DEFAULT_SETTINGS).overridden(seed=seed)
        user_settings = (self._user_settings or UserSimulator.DEFAULT_SETTINGS).overridden(seed=seed)
        if isinstance(skills, SkillSource):
            agent = LLMAgent(self._agent_model, skills=skills, settings=agent_settings)
        else:  # fixed skills, rendered once like the `all` policy
            fixed = skills if isinstance(skills, InjectedSkills) else InjectedSkills.from_skills(skills)
            instructions = skills_instructions(fixed, "all")
            agent = LLMAgent(self._agent_model, extra_instructions=instructions, settings=agent_settings)
        user = UserSimulator(self._user_model, task.user_scenario, settings=user_settings)
        simulation = await run_simulation(
            task, agent=agent, user=user, max_steps=self._max_steps, max_errors=self._max_errors, trial=trial, seed=seed
        )
        used = skills.used_skill_ids if isinstance(skills, SkillSource) else fixed.skill_ids
        simulation.skill_injection = skills.injection if isinstance(skills, SkillSource) else "all"
        simulation.injected_skill_ids = list(used)
        if self._log is not None:
            self._log.add(simulation)
        last_text = next(
            (m.content for m in reversed(simulation.messages) if m.role == "assistant" and m.has_text()), ""
        )
        return AgentOutput(
            answer=last_text or "",
            reasoning="",
            injected_skill_ids=used,
            trace_fields={"task": task.model_dump(mode="json"), "simulation": simulation.model_dump(mode="json")},
        )


class Tau2Environment:
    """Judges a `Tau2Agent` run: feedback is the reward and its breakdown, metrics the numbers."""

    def evaluate(self, sample: Sample, agent_output: AgentOutput) -> EnvironmentResult:
        """Raises ValueError when the output holds no graded tau2 simulation."""
        simulation = agent_output.trace_fields.get("simulation")
        if not isinstance(simulation, dict) or simulation.get("reward_info") is None:
            raise UsageError("Tau2Environment judges Tau2Agent outputs: no graded simulation in trace_fields")
        reward_info = RewardInfo.model_validate(simulation["reward_info"])
        ending = simulation["termination_reason"]
        metrics = {"reward": reward_info.reward, "success": float(is_success(reward_info.reward))}
        if reward_info.db_check is not None:
            metrics["db_match"] = float(reward_info.db_check.db_match)
        return EnvironmentResult(feedback=describe_outcome(reward_info, ending), metrics=metrics)


def describe_outcome(reward_info: RewardInfo, termination_reason: str) -> str:
    """The grade of one simulation in a few lines: reward, ending, DB match, facts communicated,
    expected actions missed (the Reflector's and SkillManager's feedback)."""
    verdict = "task completed" if is_success(reward_info.reward) else "task failed"
    lines = [
        f"reward {reward_info.reward:g} ({verdict})",
        f"ended by {termination_reason}: {_ENDINGS.get(termination_reason, 'unknown ending')}",
    ]
    if termination_reason not in REWARDED_TERMINATIONS:
        lines.append("not graded further: only a user or agent stop can earn a reward")
        return "\n".join(lines)
    if reward_info.db_check is not None:
        matched = reward_info.db_check.db_match
        lines.append(f"database: {'matches' if matched else 'does NOT match'} the expected end state")
    checks = reward_info.communicate_checks or []
    if checks:
        missing = [check.info for check in checks if not check.met]
        said = f"facts the agent had to tell the user: {len(checks) - len(missing)} of {len(checks)} said"
        lines.append(said + (f"; missing: {', '.join(map(repr, missing))}" if missing else ""))
    missed = [check.action for check in reward_info.action_checks or [] if not check.action_match]
    if missed:
        calls = "; ".join(f"{action.name}({_arguments(action.arguments)})" for action in missed)
        lines.append(f"expected actions not taken as expected: {calls}")
    elif reward_info.action_checks:
        lines.append("every expected action was taken")
    return "\n".join(lines)


def _arguments(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())


def _task_of(sample: Sample | None) -> tuple[Task, int, int | None]:
    metadata = sample.metadata if sample is not None else {}
    task = metadata.get("task")
    if not isinstance(task, Task):
        raise UsageError("Tau2Agent needs a sample from tau2_samples (its metadata holds the tau2 task)")
    return task, int(metadata.get("trial", 0)), metadata.get("seed")
