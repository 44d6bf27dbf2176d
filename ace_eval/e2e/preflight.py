"""Everything `ace-eval e2e` checks before it calls any model; a problem is an `E2EInputError`.

- settings in range, a known injection policy;
- no mix of offline (scripted) and real models among the roles that run (a scripted SkillManager's
  hand-written advice next to a real agent would look like learning);
- a provider credential for every real model (one line naming the variable, e.g.
  `OPENAI_API_KEY is not set for openai/gpt-4.1-mini`), unless `--api-base` names a server;
- recorded traces: paths that exist, folders holding .json files, at least one usable simulation
  (graded here when it is not) and, when the benchmark runs, no test-split task unless
  `allow_test_overlap`. A file that is not a tau2 Results file, or a simulation that cannot be
  used, is not an input error when other traces are usable: `load_traces` lists it as unusable and
  the run records it as a failure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ace.roles import SKILL_INJECTIONS
from ace.untrusted import quote
from ace_eval.e2e.config import E2EConfig, E2EInputError
from ace_eval.tau2 import Results, ResultsFormatError, SimulationRun, Tau2Error, evaluate_simulation, load_results
from ace_eval.tau2.ace_task import describe_outcome
from ace_eval.tau2.metrics import task_order

__all__ = [
    "E2EInputError",
    "RecordedTraces",
    "UnusableTrace",
    "check_config",
    "load_traces",
]


def check_config(config: E2EConfig) -> None:
    """Raise `E2EInputError` for a setting out of range, `recheck` with recorded traces, mixed
    offline/real roles, or a real model whose provider credential is missing."""
    limits = {
        "num_trials": config.num_trials,
        "max_steps": config.max_steps,
        "max_workers": config.max_workers,
        "skills_limit": config.skills_limit,
        "train_epochs": config.epochs,
    }
    too_small = [f"{name}={value}" for name, value in limits.items() if value < 1]
    if config.task_limit is not None and config.task_limit < 1:
        too_small.append(f"task_limit={config.task_limit}")
    if too_small:
        raise E2EInputError(f"{', '.join(too_small)}: must be at least 1")
    for role in config.running_roles():
        try:
            config.request_settings(role)
        except ValueError as exc:
            raise E2EInputError(f"request settings of the {role.replace('_', ' ')}: {exc}") from exc
    if config.skill_injection not in SKILL_INJECTIONS:
        raise E2EInputError(
            f"skill_injection must be one of {', '.join(SKILL_INJECTIONS)}; got {config.skill_injection!r}"
        )
    if config.recheck and config.traces:
        raise E2EInputError(
            "--recheck runs the agent again on a training task, so it needs online learning: drop --traces"
        )
    config.check_roles()


@dataclasses.dataclass(frozen=True)
class UnusableTrace:
    """A `--traces` file, or one simulation in it, that cannot be learned from. The run goes on
    with the usable traces and records this as a failed learning sample (exit status 1)."""

    source_file: str
    """The file given (or found in a folder given) to `--traces`."""
    reason: str
    """Why it cannot be used, one line naming the file (and the simulation)."""
    task_id: str | None = None
    """The simulation's task, for a bad simulation in a usable file."""
    trial: int | None = None
    """The simulation's trial, for a bad simulation in a usable file."""


@dataclasses.dataclass(frozen=True)
class RecordedTraces:
    """What `--traces` hold: the traces to learn from and the inputs that cannot be used."""

    traces: tuple[dict[str, Any], ...]
    """One `{"task", "simulation", "feedback", "source_file"}` trace per usable simulation."""
    unusable: tuple[UnusableTrace, ...]
    """Every file that is not a tau2 Results file with a simulation, and every simulation whose
    task the file lacks or that cannot be graded."""


def load_traces(config: E2EConfig, test_task_ids: Iterable[str]) -> RecordedTraces:
    """Every simulation of `config.traces` as a trace for the Reflector: `{"task", "simulation",
    "feedback", "source_file"}`, graded with the task it was recorded with (upstream's reward rule)
    when the file holds no grade.

    A file that is not a tau2 Results file (malformed, truncated, the wrong shape, no simulation)
    and a simulation whose task the file lacks or that cannot be graded are `unusable`: the run
    records them as failures and learns from the rest. Raises `E2EInputError` for a path that does
    not exist, a folder without a .json file, no usable trace at all, and - when the benchmark runs
    and `allow_test_overlap` is off - simulations of test-split tasks.
    """
    traces: list[dict[str, Any]] = []
    unusable: list[UnusableTrace] = []
    for file in _result_files(config.traces):
        try:
            results = load_results(file)
        except ResultsFormatError as exc:
            unusable.append(UnusableTrace(str(file), str(exc)))
            continue
        if not results.simulations:
            unusable.append(UnusableTrace(str(file), f"{file} holds no simulation"))
            continue
        for simulation in results.simulations:
            trace = _trace(file, results, simulation)
            if isinstance(trace, UnusableTrace):
                unusable.append(trace)
            else:
                traces.append(trace)
    if not traces:
        more = f" (and {len(unusable) - 1} more unusable)" if len(unusable) > 1 else ""
        raise E2EInputError(f"--traces: no usable trace: {unusable[0].reason}{more}")
    overlap = sorted({t["simulation"]["task_id"] for t in traces} & set(test_task_ids), key=task_order)
    if overlap and config.benchmark and not config.allow_test_overlap:
        raise E2EInputError(
            f"--traces hold simulations of test-split tasks {', '.join(overlap)}, which the benchmark runs on: "
            "learning from them would leak the test into the skills. Use traces of other tasks, add "
            "--no-benchmark, or pass --allow-test-overlap to accept the leak"
        )
    return RecordedTraces(tuple(traces), tuple(unusable))


def _trace(file: Path, results: Results, simulation: SimulationRun) -> dict[str, Any] | UnusableTrace:
    """The Reflector's trace of one simulation, or why it cannot be one."""
    task = next((task for task in results.tasks if task.id == simulation.task_id), None)
    where = f"{file}: simulation {quote(simulation.id)}"
    if task is None:
        return UnusableTrace(
            str(file),
            f"{where} is of task {quote(simulation.task_id)}, which the file's tasks do not include",
            simulation.task_id,
            simulation.trial,
        )
    if simulation.reward_info is None:
        try:
            simulation.reward_info = evaluate_simulation(task, simulation.messages, simulation.termination_reason)
        except Tau2Error as exc:
            return UnusableTrace(str(file), f"{where}: cannot grade it: {exc}", simulation.task_id, simulation.trial)
    return {
        "task": task.model_dump(mode="json"),
        "simulation": simulation.model_dump(mode="json"),
        "feedback": describe_outcome(simulation.reward_info, simulation.termination_reason),
        "source_file": str(file),
    }


def _result_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if not path.exists():
            raise E2EInputError(f"--traces {path}: no such file or folder")
        found = sorted(p for p in path.rglob("*.json") if p.is_file()) if path.is_dir() else [path]
        if not found:
            raise E2EInputError(f"--traces {path}: the folder holds no .json file (tau2 Results files are expected)")
        files.extend(found)
    return files
