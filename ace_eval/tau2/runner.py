"""Run tasks x trials concurrently (bounded by `workers`) on one event loop; collect tau2 Results.

Every (task, trial) yields either a graded `SimulationRun` in `results.simulations` or a
`SimulationFailure` in `failures` (a model or provider exception): failures are reported, never
silently scored 0. With `output_path`, the Results file is rewritten atomically after every
finished simulation, so an interrupted run keeps what it finished.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from ace import tracing
from ace.errors import UsageError
from ace.models import RequestSettings, resolve_model
from ace_eval.tau2.agent import LLMAgent
from ace_eval.tau2.data import load_policy, simulation_guidelines
from ace_eval.tau2.orchestrator import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS, run_simulation
from ace_eval.tau2.results import Results, now_iso, write_results
from ace_eval.tau2.tasks import Task
from ace_eval.tau2.user_simulator import UserSimulator

__all__ = ["SimulationFailure", "Tau2Run", "run_info", "run_tasks", "trial_seeds"]


@dataclass(frozen=True)
class SimulationFailure:
    """A simulation that raised instead of finishing."""

    task_id: str
    """The task being simulated."""
    trial: int
    """Its trial index."""
    error: str
    """`ExceptionType: message`."""


@dataclass
class Tau2Run:
    """The outcome of `run_tasks`."""

    results: Results
    """Finished, graded simulations and the run configuration (tau2 Results schema)."""
    failures: list[SimulationFailure] = field(default_factory=list)
    """Simulations that raised; not in `results`."""


def trial_seeds(seed: int, trials: int) -> list[int]:
    """Upstream's per-trial seeds: `random.seed(seed)`, then one `randint(0, 1_000_000)` per trial."""
    rng = random.Random(seed)
    return [rng.randint(0, 1_000_000) for _ in range(trials)]


async def run_tasks(
    tasks: Sequence[Task],
    *,
    agent_model: str | Model,
    user_model: str | Model,
    trials: int = 1,
    workers: int = 4,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    agent_temperature: float = 0.0,
    user_temperature: float = 0.0,
    extra_instructions: str = "",
    seed: int = 300,
    output_path: str | Path | None = None,
) -> Tau2Run:
    """Simulate every task `trials` times, at most `workers` at once, and grade each run.

    Models are model strings (resolved with `ace.models.resolve_model`) or pydantic-ai `Model`s.
    `extra_instructions` is appended to the agent's system prompt (ACE's skills block). Trial `t`
    runs with upstream's per-trial seed `trial_seeds(seed, trials)[t]`, recorded on the simulation
    and sent with every request of both models (`ModelSettings.seed`).
    Raises `ValueError` for `trials`, `workers`, `max_steps` or `max_errors` below 1 (before any
    simulation starts, so a bad setting is not reported as one failure per simulation).
    """
    _refuse_below_one(trials=trials, workers=workers, max_steps=max_steps, max_errors=max_errors)
    agent = resolve_model(agent_model)
    user = resolve_model(user_model)
    agent_settings = LLMAgent.DEFAULT_SETTINGS.overridden(temperature=agent_temperature)
    user_settings = UserSimulator.DEFAULT_SETTINGS.overridden(temperature=user_temperature)
    seeds = trial_seeds(seed, trials)
    info = run_info(
        agent=_model_name(agent_model, agent),
        user=_model_name(user_model, user),
        trials=trials,
        max_steps=max_steps,
        max_errors=max_errors,
        agent_settings=agent_settings,
        user_settings=user_settings,
        extra_instructions=extra_instructions,
        seed=seed,
    )
    run = Tau2Run(results=Results(timestamp=now_iso(), info=info, tasks=list(tasks), simulations=[]))
    batch = _Batch(
        run,
        agent,
        user,
        agent_settings,
        user_settings,
        extra_instructions,
        seeds,
        max_steps,
        max_errors,
        output_path,
        asyncio.Semaphore(workers),
    )
    with tracing.span("tau2.run_tasks", tasks=len(tasks), trials=trials, workers=workers):
        await asyncio.gather(*(batch.simulate(task, trial) for trial in range(trials) for task in tasks))
    if output_path is not None:
        write_results(run.results, output_path)
    return run


def _refuse_below_one(**limits: int) -> None:
    too_small = {name: value for name, value in limits.items() if value < 1}
    if too_small:
        raise UsageError(f"{', '.join(f'{name}={value}' for name, value in too_small.items())}: must be at least 1")


@dataclass
class _Batch:
    """What every simulation of one `run_tasks` call shares."""

    run: Tau2Run
    agent: Model
    user: Model
    agent_settings: RequestSettings
    user_settings: RequestSettings
    extra_instructions: str
    seeds: list[int]
    max_steps: int
    max_errors: int
    output_path: str | Path | None
    slots: asyncio.Semaphore
    """At most `workers` simulations at once."""

    async def simulate(self, task: Task, trial: int) -> None:
        """Simulate `task` once with trial `trial`'s seed; a failure is recorded, never raised."""
        async with self.slots:
            seed = self.seeds[trial]
            try:
                simulation = await run_simulation(
                    task,
                    agent=LLMAgent(
                        self.agent,
                        extra_instructions=self.extra_instructions,
                        settings=self.agent_settings.overridden(seed=seed),
                    ),
                    user=UserSimulator(
                        self.user, task.user_scenario, settings=self.user_settings.overridden(seed=seed)
                    ),
                    max_steps=self.max_steps,
                    max_errors=self.max_errors,
                    trial=trial,
                    seed=seed,
                )
            except Exception as exc:  # one failing simulation must not sink the batch; it is reported
                self.run.failures.append(SimulationFailure(task.id, trial, f"{type(exc).__name__}: {exc}"))
                return
            self.run.results.simulations.append(simulation)
            if self.output_path is not None:
                write_results(self.run.results, self.output_path)


def run_info(
    *,
    agent: str,
    user: str,
    trials: int,
    max_steps: int,
    max_errors: int,
    agent_settings: RequestSettings,
    user_settings: RequestSettings,
    extra_instructions: str = "",
    seed: int = 300,
) -> dict[str, Any]:
    """The `info` block of a Results file (upstream's layout) for a run with these settings; each
    model's `llm_args` are exactly the settings its requests carry, except the per-trial seed
    (derived from `seed`, recorded on each simulation)."""
    return {
        "git_commit": None,
        "num_trials": trials,
        "max_steps": max_steps,
        "max_errors": max_errors,
        "user_info": {
            "implementation": "user_simulator",
            "llm": user,
            "llm_args": dict(user_settings.model_settings()),
            "global_simulation_guidelines": simulation_guidelines().strip(),
        },
        "agent_info": {
            "implementation": "llm_agent",
            "llm": agent,
            "llm_args": dict(agent_settings.model_settings()),
            "extra_instructions": extra_instructions,
        },
        "environment_info": {"domain_name": "airline", "policy": load_policy(), "tool_defs": None},
        "seed": seed,
    }


def _model_name(requested: str | Model, resolved: Model) -> str:
    return requested if isinstance(requested, str) else resolved.model_name
