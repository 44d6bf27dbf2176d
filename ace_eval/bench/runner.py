"""`run_bench`: learn on the training items with the product's own loop, then score every arm on the test items.

0. Preflight (`preflight.py`): settings, arms, items and models, before any model is called.
1. Learning (when an arm needs it): `ACE.from_roles` with the `Agent` role, a `GradingEnvironment`
   (feedback `labels` or `verdict`), the Reflector and the SkillManager, skills injected by the
   `SkillMatcher` as in the `learned` arm, over the training items for N epochs (barriers); with
   `counterexamples` or `confirm`, then one `ACE.validate` pass over the training items, and with
   `confirm` the lessons no second training item backs are retired (`retire_unconfirmed`). One
   checkpoint per epoch; `train_log.jsonl` as samples finish; `skillbook.json` at the end. The
   answers and feedback of epoch 1 are the `icl` arm's experience. A run given a saved skillbook
   (`config.skillbook`) has no learning phase: that skillbook, copied into the run folder, is
   what the `learned` and `all` arms answer with.
2. Arms: `ACE.evaluate` on the test items and trials, once per arm, each in its own phase (wall
   time and tokens per role): `none` (empty skillbook), `learned` (a copy of the learned skillbook,
   matched), `all` (the copy, every skill), `icl` (empty skillbook, the experience block as each
   sample's context), `oracle` (per rule, a skillbook of that rule's hand-written skill; controls
   get none). Every answer is graded by the same environment.
3. Scores and paired differences (`scoring.py`); `report.py` writes report.json and report.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from ace.models import UsageMeter, metered
from ace.pipeline import SampleResult, StepEvent, StepHook
from ace.retrieval import SkillMatcher, skill_index
from ace.roles import Agent, RecursiveReflector, Reflector, Sample, SkillInjection, SkillManager
from ace.runners import ACE
from ace.skillbook import Skill, Skillbook
from ace.steps import ACEStepContext, retire_unconfirmed
from ace_eval.bench import scripted
from ace_eval.bench.arms import Arm, Experience, IclBlock, icl_block, oracle_skillbook
from ace_eval.bench.config import BENCH_ROLES, BenchConfig, BenchRole
from ace_eval.bench.environment import GradingEnvironment, bench_samples, item_of
from ace_eval.bench.items import BenchItem
from ace_eval.bench.preflight import BenchInputError, check_run, load_saved_skillbook
from ace_eval.bench.scoring import ArmScore, ItemOutcome, PairedDifference, arm_score, paired_difference
from ace_eval.bench.task_set import TaskSet
from ace_eval.e2e.outcomes import SampleOutcome, TrainLog, outcome_of
from ace_eval.phases import PhaseRecord, measure_phase
from ace_eval.role_models import resolve_role_model

__all__ = ["BenchReport", "COMPARISONS", "run_bench", "run_bench_async"]

_SCRIPTED: dict[BenchRole, Callable[[], Model]] = {
    "agent": scripted.scripted_agent,
    "reflector": scripted.scripted_reflector,
    "skill_manager": scripted.scripted_skill_manager,
}

COMPARISONS: tuple[tuple[Arm, Arm], ...] = (
    ("learned", "none"),
    ("learned", "icl"),
    ("learned", "oracle"),
    ("all", "none"),
    ("icl", "none"),
    ("oracle", "none"),
)
"""The paired differences reported (arm, baseline), each when both arms ran: what learning adds,
whether it matches the raw experience, what it lost against the true rules, and what every other
arm adds over no memory (with its harm on controls)."""


@dataclasses.dataclass(frozen=True)
class BenchReport:
    """What a run produced and what went wrong (paths are inside `config.output_dir`)."""

    config: BenchConfig
    """The run's settings."""
    task_set: TaskSet
    """The family's items and rules (and the task-file lines that failed)."""
    train_items: tuple[BenchItem, ...]
    """The training items used (after `train_limit`)."""
    test_items: tuple[BenchItem, ...]
    """The test items every arm answered (after `test_limit`)."""
    learning: tuple[SampleOutcome, ...]
    """Every learning sample (per epoch): learned, nothing learned, or failed and why."""
    skills: tuple[Skill, ...]
    """The active skills the `learned` and `all` arms answer with, verbatim: learned, or those of the
    saved skillbook scored (none when no arm needs skills)."""
    retired: tuple[Skill, ...]
    """The lessons `confirm` retired after learning (inactive; none without it), verbatim."""
    skillbook_path: Path | None
    """The run folder's skillbook.json holding them (None when no arm needs skills)."""
    icl: IclBlock | None
    """The `icl` arm's context (None when that arm did not run)."""
    outcomes: Mapping[str, tuple[ItemOutcome, ...]]
    """Per arm, every (item, trial) in test order."""
    scores: Mapping[str, ArmScore]
    """Per arm, its accuracy with a 95% interval."""
    differences: tuple[PairedDifference, ...]
    """The `COMPARISONS` whose arms both ran."""
    phases: tuple[PhaseRecord, ...]
    """`learning`, then `arm: <name>` per arm: wall time and usage per role."""
    model_settings: Mapping[str, dict[str, Any]]
    """Per role: the `configured` RequestSettings and the settings its requests were `sent` with."""
    recoveries: Mapping[str, dict[str, int]]
    """Per role, how often `ace.models.recovering` repaired its model's responses."""

    @property
    def plumbing_only(self) -> bool:
        """True when the roles ran on offline scripted models: the figures measure plumbing, not learning."""
        return self.config.plumbing_only

    @property
    def failures(self) -> tuple[str, ...]:
        """One line per unusable input line, failed learning sample and answer that raised."""
        lines = list(self.task_set.problems)
        lines += [
            f"learning epoch {o.epoch}: {o.task_id or o.trace_uid}: {o.detail}"
            for o in self.learning
            if o.status == "failed"
        ]
        for arm, score in self.scores.items():
            lines += [f"arm {arm}: {failure}" for failure in score.failures]
        return tuple(lines)

    def prompt_tokens_per_item(self, arm: str) -> float | None:
        """The agent's input tokens per answer in `arm` as its server counted them (None without a count)."""
        phase = next((p for p in self.phases if p.name == f"arm: {arm}"), None)
        answers = len(self.outcomes.get(arm, ()))
        if phase is None or "agent" not in phase.usage or not answers:
            return None
        return phase.usage["agent"].input_tokens / answers


def run_bench(
    config: BenchConfig,
    task_set: TaskSet,
    *,
    log: Callable[[str], None] = print,
    models: Mapping[BenchRole, Model] | None = None,
) -> BenchReport:
    """Run the phases of the module docstring on one event loop; `log` receives progress lines.

    `models` replaces the models of the config's model strings for the roles it names (custom
    clients, or FunctionModels in tests); the config's strings are still what the report names.
    Raises `BenchInputError` for bad settings or inputs before any model is called; a failing
    learning sample or answer is reported (`failures`), never fatal.
    """
    return asyncio.run(run_bench_async(config, task_set, log=log, models=models))


async def run_bench_async(
    config: BenchConfig,
    task_set: TaskSet,
    *,
    log: Callable[[str], None] = print,
    models: Mapping[BenchRole, Model] | None = None,
) -> BenchReport:
    """`run_bench` for async callers, on their event loop."""
    check_run(config, task_set)
    saved = load_saved_skillbook(config.skillbook) if config.skillbook is not None else None
    train = task_set.split("train", config.train_limit) if config.learns else ()
    test = task_set.split("test", config.test_limit)
    meters = {role: UsageMeter() for role in BENCH_ROLES}
    resolved = {role: _model(config, role, meters[role], (models or {}).get(role)) for role in BENCH_ROLES}
    skillbook = Skillbook()
    agent = Agent(resolved["agent"], settings=config.request_settings("agent"))
    reflector = _reflector(config, resolved["reflector"], skillbook)
    skill_manager = SkillManager(
        resolved["skill_manager"],
        settings=config.request_settings("skill_manager"),
        config=config.agentic_config(),
        require_task_match=config.require_task_match,
        worked_examples=config.worked_examples,
    )
    roles = _Roles(agent, reflector, skill_manager)
    out = config.output_dir
    out.mkdir(parents=True, exist_ok=True)
    phases: list[PhaseRecord] = []

    learning: tuple[SampleOutcome, ...] = ()
    skillbook_path: Path | None = None
    skills: tuple[Skill, ...] = ()
    retired: tuple[Skill, ...] = ()
    experiences: list[Experience] = []
    if config.learns:
        log(
            f"learning: {len(train)} training items x {config.train_epochs} epoch(s), feedback {config.feedback}, "
            f"learning from {config.learn_from}{', rechecked' if config.recheck else ''}"
            f"{', counterexamples checked' if config.counterexamples else ''}"
            f"{', unconfirmed lessons retired' if config.confirm else ''}"
            f"{', worked examples' if config.worked_examples else ''} "
            f"(agent {config.agent_model}, {config.reflector_type} reflector {config.reflector_model}, "
            f"skill manager {config.skill_manager_model})"
        )
        with measure_phase("learning", meters, phases):
            experience_log = _ExperienceLog()
            results, retired = await _learn(config, roles, skillbook, train, log, experience_log.hook)
        learning = tuple(outcome_of(result) for result in results)
        experiences = experience_log.experiences()
        skillbook_path, skills = _save_for_arms(skillbook, out)
        failed = sum(o.status == "failed" for o in learning)
        log(
            f"learning done: {len(skills)} active skills; {sum(o.status == 'learned' for o in learning)} of "
            f"{len(learning)} samples learned from, {failed} failed"
        )
    elif saved is not None:
        skillbook_path, skills = _save_for_arms(saved, out)
        log(f"no learning phase: scoring the {len(skills)} active skills of {config.skillbook}")

    icl = icl_block(experiences, config.icl_budget) if "icl" in config.arms else None
    outcomes: dict[str, tuple[ItemOutcome, ...]] = {}
    for arm in config.arms:
        log(f"arm {arm}: {len(test)} test items x {config.trials} trial(s)")
        with measure_phase(f"arm: {arm}", meters, phases):
            outcomes[arm] = await _run_arm(arm, config, roles, task_set, test, skillbook_path, icl)
    items = {item.id: item for item in test}
    scores = {arm: arm_score(arm, arm_outcomes, items, seed=config.seed) for arm, arm_outcomes in outcomes.items()}
    differences = tuple(
        paired_difference(arm, outcomes[arm], baseline, outcomes[baseline], items, seed=config.seed)
        for arm, baseline in COMPARISONS
        if arm in outcomes and baseline in outcomes
    )
    return BenchReport(
        config=config,
        task_set=task_set,
        train_items=tuple(train),
        test_items=tuple(test),
        learning=learning,
        skills=skills,
        retired=retired,
        skillbook_path=skillbook_path,
        icl=icl,
        outcomes=outcomes,
        scores=scores,
        differences=differences,
        phases=tuple(phases),
        model_settings={
            role: {"configured": config.request_settings(role).to_dict(), "sent": meters[role].settings_sent()}
            for role in BENCH_ROLES
        },
        recoveries={role: dict(getattr(roles, role).recoveries) for role in BENCH_ROLES},
    )


def _save_for_arms(skillbook: Skillbook, out: Path) -> tuple[Path, tuple[Skill, ...]]:
    """Save `skillbook` as the run's skillbook.json with its search and match vectors (the arms then
    embed no skill again); returns the file and the active skills."""
    skill_index(skillbook).refresh()
    SkillMatcher(skillbook).refresh()
    path = out / "skillbook.json"
    skillbook.save_to_file(path)
    return path, tuple(skillbook.skills())


@dataclasses.dataclass(frozen=True)
class _Roles:
    agent: Agent
    reflector: Reflector | RecursiveReflector
    skill_manager: SkillManager


async def _learn(
    config: BenchConfig,
    roles: _Roles,
    skillbook: Skillbook,
    train: Sequence[BenchItem],
    log: Callable[[str], None],
    experience_hook: StepHook,
) -> tuple[list[SampleResult], tuple[Skill, ...]]:
    """Every learning sample's result, and the lessons retired as unconfirmed (see the module docstring)."""
    out = config.output_dir
    train_log = TrainLog(out / "train_log.jsonl")

    def end_epoch(epoch: int, results: list[SampleResult]) -> None:
        skillbook.save_to_file(out / "checkpoints" / f"epoch_{epoch}.json")
        failed = sum(outcome_of(result).status == "failed" for result in results)
        log(f"epoch {epoch}/{config.train_epochs} done: {len(skillbook.skills())} active skills, {failed} failed")

    ace = ACE.from_roles(
        agent=roles.agent,
        environment=GradingEnvironment(config.feedback),
        reflector=roles.reflector,
        skill_manager=roles.skill_manager,
        skillbook=skillbook,
        matcher=SkillMatcher(skillbook),
        match_limit=config.skills_limit,
        recheck=config.recheck,
        counterexamples=config.counterexamples,
        confirmations=config.confirm,
        reflect_workers=config.max_workers,
        learn_from=config.learn_from,
    )
    results = await ace.run_async(
        bench_samples(train),
        epochs=config.train_epochs,
        workers=config.max_workers,
        after_step=(train_log.hook, experience_hook),
        on_epoch_end=end_epoch,
    )
    if config.counterexamples or config.confirm:
        checked = await ace.validate_async(bench_samples(train), workers=config.max_workers)
        found = [_item_id(result) for result in checked if _is_counterexample(result)]
        log(f"validation pass: {len(found)} of {len(checked)} training items broken by their skills {found}")
    retired = tuple(retire_unconfirmed(skillbook)) if config.confirm else ()
    if config.confirm:
        log(f"retired {len(retired)} lesson(s) no second training item backs: {[skill.id for skill in retired]}")
    return results, retired


def _item_id(result: SampleResult) -> str:
    ctx = result.output
    return item_of(ctx.sample).id if isinstance(ctx, ACEStepContext) and isinstance(ctx.sample, Sample) else "?"


def _is_counterexample(result: SampleResult) -> bool:
    ctx = result.output
    return isinstance(ctx, ACEStepContext) and ctx.learning_skipped is not None


async def _run_arm(
    arm: Arm,
    config: BenchConfig,
    roles: _Roles,
    task_set: TaskSet,
    test: Sequence[BenchItem],
    skillbook_path: Path | None,
    icl: IclBlock | None,
) -> tuple[ItemOutcome, ...]:
    """Every (item, trial) of `test` answered and graded under `arm`, in test order."""
    groups: list[tuple[Skillbook, SkillInjection, list[Sample]]]
    samples = bench_samples(test, trials=config.trials)
    if arm in ("learned", "all"):
        assert skillbook_path is not None
        groups = [(Skillbook.load_from_file(skillbook_path), "matched" if arm == "learned" else "all", samples)]
    elif arm == "icl":
        assert icl is not None
        groups = [(Skillbook(), "all", bench_samples(test, trials=config.trials, context=icl.text))]
    elif arm == "oracle":
        by_rule: dict[str | None, list[Sample]] = {}
        for sample in samples:
            rule = item_of(sample).rule
            by_rule.setdefault(rule if rule in task_set.rules else None, []).append(sample)
        groups = [
            (oracle_skillbook(rule, task_set.rules) if rule is not None else Skillbook(), "all", group)
            for rule, group in by_rule.items()
        ]
    else:
        groups = [(Skillbook(), "all", samples)]
    outcomes: list[ItemOutcome] = []
    for skillbook, injection, group in groups:
        ace = ACE.from_roles(
            agent=roles.agent,
            environment=GradingEnvironment(config.feedback),
            reflector=roles.reflector,
            skill_manager=roles.skill_manager,
            skillbook=skillbook,
            matcher=SkillMatcher(skillbook) if injection == "matched" else None,
            skill_injection=injection,
            match_limit=config.skills_limit,
        )
        results = await ace.evaluate_async(group, workers=config.max_workers)
        outcomes.extend(_item_outcome(sample, result) for sample, result in zip(group, results, strict=True))
    order = {item.id: index for index, item in enumerate(test)}
    return tuple(sorted(outcomes, key=lambda o: (order[o.item_id], o.trial)))


def _item_outcome(sample: Sample, result: SampleResult) -> ItemOutcome:
    item, trial = item_of(sample), int(sample.metadata["trial"])
    ctx = result.output
    if result.error is not None or not isinstance(ctx, ACEStepContext) or ctx.agent_output is None:
        error = f"{result.failed_at}: {type(result.error).__name__}: {result.error}"
        return ItemOutcome(item.id, trial, correct=False, answer=None, error=error)
    return ItemOutcome(
        item.id,
        trial,
        correct=bool(ctx.trace["metrics"]["correct"]),
        answer=ctx.agent_output.answer,
        injected_skill_ids=tuple(ctx.injected_skill_ids),
    )


class _ExperienceLog:
    """An `after_step` hook keeping each epoch-1 training answer and its feedback as soon as it is
    graded: the `icl` arm's experience holds every graded answer, also of the samples whose
    reflection or curation then failed (the raw experience does not depend on the learner)."""

    def __init__(self) -> None:
        self._by_sample: dict[int, Experience] = {}

    def hook(self, event: StepEvent) -> None:
        ctx = event.output if event.output is not None else event.context
        if event.sample_index is None or event.sample_index in self._by_sample or not isinstance(ctx, ACEStepContext):
            return
        trace = ctx.trace
        if ctx.epoch == 1 and isinstance(trace, dict) and "feedback" in trace:
            experience = Experience(question=trace["question"], answer=trace["answer"], feedback=trace["feedback"])
            self._by_sample[event.sample_index] = experience

    def experiences(self) -> list[Experience]:
        """The experiences kept, in training order."""
        return [self._by_sample[index] for index in sorted(self._by_sample)]


def _model(config: BenchConfig, role: BenchRole, meter: UsageMeter, given: Model | None) -> Model:
    if given is not None:
        return metered(given, meter)
    try:
        return resolve_role_model(config.model_of(role), role, meter, server=config.server, scripted=_SCRIPTED[role])
    except ValueError as exc:
        raise BenchInputError(str(exc)) from exc


def _reflector(config: BenchConfig, model: Model, skillbook: Skillbook) -> Reflector | RecursiveReflector:
    settings = config.request_settings("reflector")
    if config.reflector_type == "rr":
        return RecursiveReflector(model, skillbook=skillbook.view(), settings=settings, config=config.agentic_config())
    return Reflector(model, settings=settings)
