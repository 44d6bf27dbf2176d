"""`run_e2e`: collect tau2 traces (or read recorded ones), learn a skillbook, benchmark it.

1. Collection: with no `traces`, the agent (no skills) runs the train split; the tau2 Results file
   lands in `collection/results.json`.
2. Learning: `TraceAnalyser` (Reflector or RecursiveReflector + SkillManager) over every simulation,
   checkpointing to `checkpoints/`; the skillbook is saved to `skillbook.json` (+ `.embeddings.npz`).
3. Benchmark: the test split twice — baseline (no skills) and ACE (the learned skills appended to the
   agent's system prompt) — graded with the upstream reward; pass^k with bootstrap CIs.
Everything is summarised in `summary.json`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from ace.atomic_write import write_text_atomic
from ace.models import resolve_model
from ace.pipeline import SampleResult
from ace.roles import RecursiveReflector, Reflector, SkillManager
from ace.runners import TraceAnalyser
from ace.skillbook import Skillbook
from ace_eval.e2e import scripted
from ace_eval.e2e.config import E2EConfig
from ace_eval.tau2 import Tau2Metrics, Tau2Run, compute_metrics, load_tasks, run_tasks

__all__ = ["E2EReport", "run_e2e", "run_e2e_async", "skills_block"]


@dataclasses.dataclass(frozen=True)
class E2EReport:
    """What a run produced (all paths are inside the run folder)."""

    skillbook_path: Path
    """The learned skillbook."""
    traces_learned: int
    """Traces learned from without a failure (counted once per epoch)."""
    learning_failures: tuple[str, ...]
    """One line per trace nothing was learned from: `<failed step>: <error>`, or a failed reflection."""
    skills: int
    """Active skills in the learned skillbook."""
    baseline: Tau2Metrics | None
    """Benchmark without skills (None with benchmark off)."""
    with_skills: Tau2Metrics | None
    """Benchmark with the learned skills."""
    simulation_failures: tuple[str, ...]
    """Simulations that raised (collection and benchmark), reported rather than scored."""


def skills_block(skillbook: Skillbook) -> str:
    """The text appended to the agent's system prompt: every active skill, or "" when none."""
    rendered = skillbook.as_prompt()
    return f"# Learned skills\nApply these lessons from earlier conversations.\n\n{rendered}" if rendered else ""


def run_e2e(config: E2EConfig, *, log: Any = print) -> E2EReport:
    """Run the three phases of the module docstring on one event loop (model clients bound to a
    loop, such as litellm's, keep working across phases); `log` receives progress lines.

    Raises the tau2 harness's errors for an unknown split; a failing simulation or trace is
    reported in the result, never fatal.
    """
    return asyncio.run(run_e2e_async(config, log=log))


async def run_e2e_async(config: E2EConfig, *, log: Any = print) -> E2EReport:
    """`run_e2e` for async callers, on their event loop."""
    out = config.output_dir
    out.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    traces = list(config.traces)
    if not traces:
        collection = out / "collection" / "results.json"
        log(f"collecting traces: {config.train_split} split, agent {config.agent_model}, user {config.user_model}")
        run = await _simulate(config, config.train_split, extra_instructions="", output_path=collection)
        failures += _failure_lines(run, "collection")
        traces = [collection]

    log(f"learning from {', '.join(map(str, traces))} ({config.reflector_type} reflector {config.reflector_model}, "
        f"skill manager {config.skill_manager_model})")
    skillbook = Skillbook()
    analyser = TraceAnalyser.from_roles(
        reflector=_reflector(config, skillbook),
        skill_manager=SkillManager(_model(config, config.skill_manager_model, scripted.scripted_skill_manager)),
        skillbook=skillbook,
        checkpoint_dir=out / "checkpoints",
        reflect_workers=config.max_workers,
    )
    results = await analyser.run_async([Path(t) for t in traces], epochs=config.epochs, workers=config.max_workers)
    learning_failures = tuple(line for line in map(_learning_failure, results) if line is not None)
    skillbook_path = out / "skillbook.json"
    skillbook.save_to_file(skillbook_path)
    log(f"learned {len(skillbook.skills())} active skills from {len(results) - len(learning_failures)} traces "
        f"({len(learning_failures)} failed) -> {skillbook_path}")

    baseline = with_skills = None
    if config.benchmark:
        log(f"benchmark: {config.test_split} split, baseline (no skills)")
        base_run = await _simulate(config, config.test_split, extra_instructions="", output_path=out / "benchmark" / "baseline.json")
        log(f"benchmark: {config.test_split} split, with the learned skills")
        ace_run = await _simulate(
            config, config.test_split, extra_instructions=skills_block(skillbook), output_path=out / "benchmark" / "ace.json"
        )
        failures += _failure_lines(base_run, "baseline") + _failure_lines(ace_run, "ace")
        baseline = _metrics(base_run)
        with_skills = _metrics(ace_run)

    report = E2EReport(
        skillbook_path=skillbook_path,
        traces_learned=len(results) - len(learning_failures),
        learning_failures=learning_failures,
        skills=len(skillbook.skills()),
        baseline=baseline,
        with_skills=with_skills,
        simulation_failures=tuple(failures),
    )
    _write_summary(config, report)
    return report


async def _simulate(config: E2EConfig, split: str, *, extra_instructions: str, output_path: Path) -> Tau2Run:
    tasks = load_tasks(split)  # type: ignore[arg-type]
    if config.task_limit is not None:
        tasks = tasks[: config.task_limit]
    return await run_tasks(
        tasks,
        agent_model=_model(config, config.agent_model, scripted.scripted_agent),
        user_model=_model(config, config.user_model, scripted.scripted_user),
        trials=config.num_trials,
        workers=config.max_workers,
        max_steps=config.max_steps,
        agent_temperature=config.temperature,
        user_temperature=config.temperature,
        extra_instructions=extra_instructions,
        output_path=output_path,
    )


def _reflector(config: E2EConfig, skillbook: Skillbook) -> Reflector | RecursiveReflector:
    if config.reflector_type == "rr":
        model = _model(config, config.reflector_model, scripted.scripted_recursive_reflector)
        return RecursiveReflector(model, skillbook=skillbook.view())
    return Reflector(_model(config, config.reflector_model, scripted.scripted_reflector))


def _model(config: E2EConfig, name: str, make_scripted: Any) -> Model:
    if name == scripted.SCRIPTED:
        return make_scripted()
    return resolve_model(name, api_base=config.api_base, api_key=config.api_key)


def _learning_failure(result: SampleResult) -> str | None:
    """Why a trace taught nothing: the step that raised, or a reflection that failed (a failed
    reflection is not an error of the pipeline, but nothing was learned from that trace)."""
    if result.error is not None:
        return f"{result.failed_at}: {type(result.error).__name__}: {result.error}"
    failed = [reflection for reflection in result.output.reflections if reflection.failed] if result.output else []
    if failed:
        return f"ReflectStep: the reflection failed: {failed[0].failure_reason}"
    return None


def _metrics(run: Tau2Run) -> Tau2Metrics | None:
    return compute_metrics(run.results.simulations) if run.results.simulations else None


def _failure_lines(run: Tau2Run, phase: str) -> list[str]:
    return [f"{phase}: task {f.task_id} trial {f.trial}: {f.error}" for f in run.failures]


def _write_summary(config: E2EConfig, report: E2EReport) -> None:
    def metrics(m: Tau2Metrics | None) -> dict[str, Any] | None:
        if m is None:
            return None
        return {
            "tasks": m.num_tasks,
            "simulations": m.num_simulations,
            "average_reward": m.average_reward,
            "pass_hat_k": m.pass_hat_k,
            "ci95": m.ci95,
        }

    summary = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(config).items()
                   if k != "api_key"},
        "skillbook": str(report.skillbook_path),
        "skills": report.skills,
        "traces_learned": report.traces_learned,
        "learning_failures": list(report.learning_failures),
        "simulation_failures": list(report.simulation_failures),
        "baseline": metrics(report.baseline),
        "with_skills": metrics(report.with_skills),
    }
    summary["config"]["traces"] = [str(t) for t in config.traces]
    write_text_atomic(config.output_dir / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
