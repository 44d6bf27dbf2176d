"""`run_e2e`: learn a skillbook with the product's own loop, then benchmark it, and say what happened.

0. Preflight (`preflight.py`): settings, roles, credentials, recorded traces - before any model call.
1. Learning. Online (no `traces`): `ACE.from_roles(agent=Tau2Agent, environment=Tau2Environment,
   ...)` runs the train split for N epochs; each simulation gets the skills learned so far by the
   injection policy, is graded, reflected on with the reward as feedback, and curated (the
   SkillManager tags the injected skills by the outcome). Offline (`traces`): `TraceAnalyser` over
   the recorded simulations; an unusable file or simulation is a failed sample of epoch 1. One checkpoint per
   epoch; `skillbook.json` at the end.
2. Benchmark: `ACE.evaluate` on the test split twice, on the same tasks and trials - baseline (an
   empty skillbook) and with a copy of the learned skillbook under the same policy - then a paired
   comparison.
3. `report.py` writes summary.json, report.json and report.md; `verify.py` checks the run folder.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from ace.agentic import AgenticConfig
from ace.errors import UsageError
from ace.models import UsageMeter, metered
from ace.pipeline import SampleResult
from ace.retrieval import SkillMatcher, skill_index
from ace.roles import RecursiveReflector, Reflector, SkillManager
from ace.runners import ACE, TraceAnalyser
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext
from ace_eval import scripted
from ace_eval.e2e.config import ROLES, E2EConfig, Role
from ace_eval.e2e.outcomes import SampleOutcome, TrainLog, learning_summary, outcome_of, unusable_outcome
from ace_eval.e2e.paired import PairedComparison, TrialOutcome, paired_comparison
from ace_eval.e2e.preflight import E2EInputError, check_config, load_traces
from ace_eval.phases import PhaseRecord, measure_phase
from ace_eval.role_models import OFFLINE_MODELS, ModelServer, resolve_role_model
from ace_eval.tau2 import Task, load_tasks
from ace_eval.tau2.ace_task import ResultsLog, Tau2Agent, Tau2Environment, tau2_samples
from ace_eval.tau2.runner import run_info

__all__ = ["E2EReport", "PhaseRecord", "run_e2e", "run_e2e_async"]

_SCRIPTED_FACTORIES: dict[Role, Callable[[], Model]] = {
    "agent": scripted.scripted_agent,
    "user": scripted.scripted_user,
    "skill_manager": scripted.scripted_skill_manager,
}


@dataclasses.dataclass(frozen=True)
class E2EReport:
    """What a run produced and what went wrong (paths are inside `config.output_dir`)."""

    config: E2EConfig
    """The run's settings."""
    skillbook_path: Path
    """The learned skillbook."""
    skills: int
    """Active skills in the learned skillbook."""
    learning: tuple[SampleOutcome, ...]
    """Every learning sample (per epoch): learned, nothing learned, or failed and why."""
    paired: PairedComparison | None
    """The benchmark (None with benchmark off)."""
    phases: tuple[PhaseRecord, ...]
    """Wall time and usage per phase."""
    benchmark_outcomes: dict[str, tuple[TrialOutcome, ...]]
    """Per arm (`baseline`, `with_skills`), every (task, trial) with its reward or error."""
    model_settings: dict[str, dict[str, Any]]
    """Per running role: the `configured` RequestSettings and the settings its requests were
    actually `sent` with (each distinct max_tokens / temperature / timeout, with a request count)."""
    recoveries: dict[str, dict[str, int]]
    """Per learning role, how often `ace.models.recovering` repaired its model's responses."""

    @property
    def plumbing_only(self) -> bool:
        """True when a role ran on an offline scripted model: the numbers measure plumbing, not learning."""
        return any(self.config.model_of(role) in OFFLINE_MODELS for role in self.config.running_roles())

    @property
    def traces_learned(self) -> int:
        """Learning samples whose SkillManager session finished and changed the skillbook."""
        return sum(outcome.status == "learned" for outcome in self.learning)

    @property
    def traces_nothing_learned(self) -> int:
        """Learning samples whose SkillManager session finished without an operation."""
        return sum(outcome.status == "nothing learned" for outcome in self.learning)

    @property
    def failures(self) -> tuple[str, ...]:
        """One line per failed learning sample or benchmark simulation."""
        lines = [
            f"--traces: {o.detail}"
            if _is_unusable_input(o)
            else f"learning epoch {o.epoch}: {_sample_label(o)}: {o.detail}"
            for o in self.learning
            if o.status == "failed"
        ]
        for arm, outcomes in self.benchmark_outcomes.items():
            lines += [f"benchmark {arm}: task {o.task_id} trial {o.trial}: {o.error}" for o in outcomes if o.error]
        return tuple(lines)


def run_e2e(
    config: E2EConfig, *, log: Callable[[str], None] = print, models: Mapping[Role, Model] | None = None
) -> E2EReport:
    """Run the phases of the module docstring on one event loop; `log` receives progress lines.

    `models` replaces the models of the config's model strings for the roles it names (custom
    clients, or FunctionModels in tests); the config's strings are still what the reports name.
    Raises `E2EInputError` for bad settings or inputs before any model is called; a failing
    simulation or trace - and a `--traces` file or simulation that cannot be used while others
    can - is reported in the result (`failures`), never fatal.
    """
    return asyncio.run(run_e2e_async(config, log=log, models=models))


async def run_e2e_async(
    config: E2EConfig, *, log: Callable[[str], None] = print, models: Mapping[Role, Model] | None = None
) -> E2EReport:
    """`run_e2e` for async callers, on their event loop."""
    check_config(config)
    test_tasks = _tasks(config, config.test_split)
    recorded = load_traces(config, [task.id for task in load_tasks(config.test_split)]) if config.traces else None  # type: ignore[arg-type]
    traces = list(recorded.traces) if recorded else []
    unusable = tuple(unusable_outcome(u) for u in recorded.unusable) if recorded else ()
    train_tasks = [] if config.traces else _tasks(config, config.train_split)
    meters: dict[Role, UsageMeter] = {role: UsageMeter() for role in ROLES}
    given = dict(models or {})
    models = {
        role: metered(given[role], meters[role]) if role in given else _model(config, role, meters[role])
        for role in config.running_roles()
    }
    out = config.output_dir
    out.mkdir(parents=True, exist_ok=True)
    phases: list[PhaseRecord] = []

    skillbook = Skillbook()
    with measure_phase("learning", meters, phases):
        reflector = _reflector(config, models["reflector"], skillbook)
        skill_manager = _skill_manager(config, models["skill_manager"])
        results = await _learn(
            config, models, skillbook, (reflector, skill_manager), (traces, unusable), train_tasks, log
        )
    skillbook_path = _save_with_vectors(skillbook, out / "skillbook.json")
    learning = unusable + tuple(outcome_of(result) for result in results)
    log(learning_summary(len(skillbook.skills()), learning, unusable))

    paired = None
    outcomes: dict[str, tuple[TrialOutcome, ...]] = {}
    if config.benchmark:
        samples = tau2_samples(test_tasks, trials=config.num_trials)
        for arm, book in (("baseline", Skillbook()), ("with_skills", Skillbook.load_from_file(skillbook_path))):
            log(f"benchmark: {config.test_split} split, {arm.replace('_', ' ')} ({len(samples)} simulations)")
            with measure_phase(f"benchmark: {arm.replace('_', ' ')}", meters, phases):
                arm_results = await _benchmark(config, models, book, arm, samples, test_tasks)
            outcomes[arm] = tuple(
                _trial_outcome(sample.metadata, result) for sample, result in zip(samples, arm_results)
            )
        paired = paired_comparison(outcomes["baseline"], outcomes["with_skills"])
    return E2EReport(
        config=config,
        skillbook_path=skillbook_path,
        skills=len(skillbook.skills()),
        learning=learning,
        paired=paired,
        phases=tuple(phases),
        benchmark_outcomes=outcomes,
        model_settings={
            role: {"configured": config.request_settings(role).to_dict(), "sent": meters[role].settings_sent()}
            for role in config.running_roles()
        },
        recoveries={
            role: {event: count for event, count in agent.recoveries.items()}
            for role, agent in (("reflector", reflector), ("skill_manager", skill_manager))
        },
    )


async def _learn(
    config: E2EConfig,
    models: dict[Role, Model],
    skillbook: Skillbook,
    learners: tuple[Reflector | RecursiveReflector, SkillManager],
    recorded: tuple[list[dict[str, Any]], tuple[SampleOutcome, ...]],
    train_tasks: list[Task],
    log: Callable[[str], None],
) -> list[SampleResult]:
    out = config.output_dir
    reflector, skill_manager = learners
    traces, unusable = recorded
    train_log = TrainLog(out / "train_log.jsonl")
    for outcome in unusable:
        train_log.write(outcome)
        log(f"failure: {outcome.detail}")
    epochs = config.epochs
    results_log = None if traces else ResultsLog(_info(config), train_tasks)
    if results_log is not None:
        results_log.open(out / "train" / "epoch_1.json")

    def end_epoch(epoch: int, results: list[SampleResult]) -> None:
        skillbook.save_to_file(out / "checkpoints" / f"epoch_{epoch}.json")
        failed = sum(outcome_of(result).status == "failed" for result in results)
        log(
            f"epoch {epoch}/{epochs} done: {len(skillbook.skills())} active skills, {failed} of its {len(results)} "
            "traces failed"
        )
        if epoch < epochs and results_log is not None:
            results_log.open(out / "train" / f"epoch_{epoch + 1}.json")

    if results_log is None:
        skipped = f" ({len(unusable)} unusable input(s) recorded as failures)" if unusable else ""
        log(
            f"learning offline from {len(traces)} recorded simulations{skipped}, {epochs} epoch(s) "
            f"({config.reflector_type} reflector {config.reflector_model}, skill manager {config.skill_manager_model})"
        )
        return await _learn_offline(config, skillbook, learners, traces, train_log, end_epoch)
    samples = tau2_samples(train_tasks, trials=config.num_trials)
    log(
        f"learning online: {config.train_split} split, {len(samples)} simulations x {epochs} epoch(s), "
        f"skills {config.skill_injection} (agent {config.agent_model}, user {config.user_model}, "
        f"{config.reflector_type} reflector {config.reflector_model}, skill manager {config.skill_manager_model})"
    )
    ace = ACE.from_roles(
        agent=_tau2_agent(config, models, results_log),
        environment=Tau2Environment(),
        reflector=reflector,
        skill_manager=skill_manager,
        skillbook=skillbook,
        matcher=SkillMatcher(skillbook) if config.skill_injection == "matched" else None,
        skill_injection=config.skill_injection,
        match_limit=config.skills_limit,
        recheck=config.recheck,
        reflect_workers=config.max_workers,
        learn_from=config.learn_from,
    )
    return await ace.run_async(
        samples, epochs=epochs, workers=config.max_workers, after_step=train_log.hook, on_epoch_end=end_epoch
    )


async def _learn_offline(
    config: E2EConfig,
    skillbook: Skillbook,
    learners: tuple[Reflector | RecursiveReflector, SkillManager],
    traces: list[dict[str, Any]],
    train_log: TrainLog,
    end_epoch: Callable[[int, list[SampleResult]], None],
) -> list[SampleResult]:
    """Learning from recorded simulations: the `TraceAnalyser` over `traces`."""
    reflector, skill_manager = learners
    analyser = TraceAnalyser.from_roles(
        reflector=reflector,
        skill_manager=skill_manager,
        skillbook=skillbook,
        reflect_workers=config.max_workers,
        learn_from=config.learn_from,
    )
    return await analyser.run_async(
        traces, epochs=config.epochs, workers=config.max_workers, after_step=train_log.hook, on_epoch_end=end_epoch
    )


async def _benchmark(
    config: E2EConfig,
    models: dict[Role, Model],
    skillbook: Skillbook,
    arm: str,
    samples: Sequence[Any],
    tasks: list[Task],
) -> list[SampleResult]:
    """One arm: the baseline gets an empty skillbook (nothing to inject), the other a copy of the
    learned one under the run's policy (its use counts stay out of the learned skillbook)."""
    results_log = ResultsLog(_info(config), tasks)
    results_log.open(config.output_dir / "benchmark" / f"{arm}.json")
    injection = config.skill_injection if arm == "with_skills" else "all"
    ace = ACE.from_roles(
        agent=_tau2_agent(config, models, results_log),
        environment=Tau2Environment(),
        reflector=_reflector(config, models["reflector"], skillbook),
        skill_manager=_skill_manager(config, models["skill_manager"]),
        skillbook=skillbook,
        matcher=SkillMatcher(skillbook) if injection == "matched" else None,
        skill_injection=injection,
        match_limit=config.skills_limit,
    )
    return await ace.evaluate_async(samples, workers=config.max_workers)


def _tau2_agent(config: E2EConfig, models: dict[Role, Model], results_log: ResultsLog) -> Tau2Agent:
    return Tau2Agent(
        models["agent"],
        models["user"],
        max_steps=config.max_steps,
        agent_settings=config.request_settings("agent"),
        user_settings=config.request_settings("user"),
        log=results_log,
    )


def _info(config: E2EConfig) -> dict[str, Any]:
    info = run_info(
        agent=config.agent_model,
        user=config.user_model,
        trials=config.num_trials,
        max_steps=config.max_steps,
        max_errors=10,
        agent_settings=config.request_settings("agent"),
        user_settings=config.request_settings("user"),
    )
    info["ace"] = {"skill_injection": config.skill_injection, "skills_limit": config.skills_limit}
    return info


def _trial_outcome(metadata: Any, result: SampleResult) -> TrialOutcome:
    task_id, trial = str(metadata["task"].id), int(metadata["trial"])
    if result.error is not None or result.output is None:
        return TrialOutcome(
            task_id, trial, 0.0, error=f"{result.failed_at}: {type(result.error).__name__}: {result.error}"
        )
    assert isinstance(result.output, ACEStepContext)
    return TrialOutcome(task_id, trial, float(result.output.trace["metrics"]["reward"]))


def _tasks(config: E2EConfig, split: str) -> list[Task]:
    tasks = load_tasks(split)  # type: ignore[arg-type]
    return tasks[: config.task_limit] if config.task_limit is not None else tasks


def _reflector(config: E2EConfig, model: Model, skillbook: Skillbook) -> Reflector | RecursiveReflector:
    settings = config.request_settings("reflector")
    if config.reflector_type == "rr":
        return RecursiveReflector(model, skillbook=skillbook.view(), settings=settings, config=_agentic(config))
    return Reflector(model, settings=settings)


def _skill_manager(config: E2EConfig, model: Model) -> SkillManager:
    return SkillManager(model, settings=config.request_settings("skill_manager"), config=_agentic(config))


def _agentic(config: E2EConfig) -> AgenticConfig:
    return AgenticConfig(context_window_tokens=config.context_window)


def _model(config: E2EConfig, role: Role, meter: UsageMeter) -> Model:
    scripted_factory = _SCRIPTED_FACTORIES.get(role)
    if scripted_factory is None:  # the reflector's scripted model depends on the reflector type
        rr = config.reflector_type == "rr"
        scripted_factory = scripted.scripted_recursive_reflector if rr else scripted.scripted_reflector
    server = ModelServer(
        api_base=config.api_base, api_key=config.api_key, cache_prompts=config.cache_prompts, cache_ttl=config.cache_ttl
    )
    try:
        return resolve_role_model(config.model_of(role), role, meter, server=server, scripted=scripted_factory)
    except UsageError as exc:
        raise E2EInputError(str(exc)) from exc


def _save_with_vectors(skillbook: Skillbook, path: Path) -> Path:
    """Save `skillbook` to `path` with a search and a match vector for every active skill in its
    .embeddings.npz sidecar, so neither the benchmark arm nor `ace serve` / `ace match` on this
    file embeds the skills again; returns `path`."""
    skill_index(skillbook).refresh()
    SkillMatcher(skillbook).refresh()
    skillbook.save_to_file(path)
    return path


def _is_unusable_input(outcome: SampleOutcome) -> bool:
    """A `--traces` file or simulation that could not be used (no trace ran; its detail names it)."""
    return outcome.trace_uid is None and outcome.source_file is not None and not outcome.operations


def _sample_label(outcome: SampleOutcome) -> str:
    if outcome.task_id is not None:
        return f"task {outcome.task_id} trial {outcome.trial if outcome.trial is not None else 0}"
    return outcome.trace_uid or outcome.source_file or "trace"
