"""`ACE`: the full loop — the agent answers, the environment judges, the loop learns in the background."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from typing_extensions import Unpack

from ace.errors import UsageError
from ace.pipeline import Pipeline, SampleResult, StepHook, run_blocking
from ace.retrieval.matching import SkillMatcher
from ace.roles import AgentLike, ReflectorLike, SkillInjection, SkillManagerLike
from ace.runners._runner import EpochCallback, Runner
from ace.skillbook import Skillbook, SkillbookView
from ace.steps import (
    ACEStepContext,
    AgentStep,
    ConfirmationStep,
    CounterexampleStep,
    EvaluateStep,
    Recheck,
    Sample,
    TailOptions,
    TaskEnvironment,
)

__all__ = ["ACE"]


class ACE(Runner):
    """AgentStep -> EvaluateStep [-> CounterexampleStep] [-> ConfirmationStep] -> ReflectStep ->
    UpdateStep [-> dedup] [-> checkpoint] [-> extra].

    Build it with `ACE.from_roles(...)`; `run(samples, epochs=..., workers=...)` returns one
    `SampleResult` per sample per epoch; `evaluate(samples)` answers and judges without learning;
    `validate(samples)` records what the skills break and what they fix (with `counterexamples=True`
    or `confirmations=True`); `skillbook` is the skillbook being learned.
    """

    def __init__(
        self, pipeline: Pipeline, skillbook: Skillbook, *, head: Pipeline, checks: Pipeline | None = None
    ) -> None:
        super().__init__(pipeline, skillbook)
        self.head = head
        """AgentStep -> EvaluateStep alone: what `evaluate` runs."""
        self.checks = checks
        """AgentStep -> EvaluateStep -> the CounterexampleStep and ConfirmationStep asked for: what
        `validate` runs (None with neither)."""

    @classmethod
    def from_roles(
        cls,
        *,
        agent: AgentLike,
        reflector: ReflectorLike,
        skill_manager: SkillManagerLike,
        environment: TaskEnvironment | None = None,
        skillbook: Skillbook | None = None,
        matcher: SkillMatcher | None = None,
        skill_injection: SkillInjection | None = None,
        match_limit: int = 3,
        recheck: bool = False,
        counterexamples: bool = False,
        confirmations: bool = False,
        extra_steps: Sequence[Any] | None = None,
        **options: Unpack[TailOptions],
    ) -> ACE:
        """Assemble the loop. `skill_injection` says how learned skills reach the agent:
        `matched` (the default with a `matcher`: the matcher's up to `match_limit` skills for each
        task), `all` (the default without one: every active skill) or `tool` (a catalog of ids and
        issues, insights read through a `read_skill` tool). `environment` gives feedback (default:
        none); `recheck` keeps a skill a SkillManager session added or updated only if the agent,
        answering the same sample again with it, gets it fully right (`ace.steps.Recheck`; needs an
        environment that grades). `counterexamples` answers a failed sample again without its
        injected skills; if that is fully right, they are tagged with it as a counterexample (the
        matcher then withholds them from tasks like it) and the sample is not learned from
        (`ace.steps.CounterexampleStep`; needs an environment that grades). `confirmations` answers
        a fully right sample again without its injected skills; if that is not fully right, they
        are tagged with it as a confirmation (`ace.steps.ConfirmationStep`; `retire_unconfirmed`
        then retires the lessons no second task backs; needs an environment that grades). `options` are the
        learning tail's (`reflect_workers`, `learn_from`, `dedup_manager`, `dedup_interval`,
        `checkpoint_dir`, `checkpoint_interval`).
        Raises UsageError for a matcher on another skillbook, a policy that does not fit the
        matcher, or `recheck`, `counterexamples` or `confirmations` without an environment."""
        skillbook = skillbook if skillbook is not None else Skillbook()
        if matcher is not None and not _follows(matcher, skillbook):
            raise UsageError(
                "the matcher follows another skillbook than the one being learned; build it as "
                "SkillMatcher(skillbook) and pass that same skillbook to from_roles"
            )
        for flag, wanted in (
            ("recheck", recheck),
            ("counterexamples", counterexamples),
            ("confirmations", confirmations),
        ):
            if wanted and environment is None:
                raise UsageError(f"{flag} needs an environment that grades the answers; pass environment=...")
        agent_step = AgentStep(agent, skillbook, injection=skill_injection, matcher=matcher, match_limit=match_limit)
        evaluate_step = EvaluateStep(environment)
        head: list[Any] = [agent_step, evaluate_step]
        checks: list[Any] = [CounterexampleStep(agent_step, evaluate_step, skillbook)] if counterexamples else []
        if confirmations:
            checks.append(ConfirmationStep(agent_step, evaluate_step, skillbook))
        pipeline = cls.assemble(
            "ACE",
            [*head, *checks],
            reflector=reflector,
            skill_manager=skill_manager,
            skillbook=skillbook,
            extra_steps=extra_steps,
            options=options,
            recheck=Recheck(agent_step, evaluate_step) if recheck else None,
        )
        check = Pipeline([*head, *checks], name="ACE.validate") if checks else None
        return cls(pipeline, skillbook, head=Pipeline(head, name="ACE.evaluate"), checks=check)

    def run(
        self,
        samples: Iterable[Sample | str],
        *,
        epochs: int = 1,
        workers: int = 1,
        after_step: StepHook | Sequence[StepHook] = (),
        on_epoch_end: EpochCallback | None = None,
    ) -> list[SampleResult]:
        """Answer and learn from every sample, `epochs` times; learning of an epoch finishes before
        the next epoch starts. A plain string is a `Sample` with that question. `after_step` hooks
        observe every step; `on_epoch_end(epoch, results)` runs after each epoch's learning (e.g.
        to checkpoint). Raises TypeError when `samples` is itself a string (it would be read as
        one sample per character), and `PipelineError` inside a running event loop (await
        `run_async` there)."""
        return self.run_epochs(
            _samples(samples),
            epochs=epochs,
            workers=workers,
            make_context=_context_for,
            after_step=after_step,
            on_epoch_end=on_epoch_end,
        )

    async def run_async(
        self,
        samples: Iterable[Sample | str],
        *,
        epochs: int = 1,
        workers: int = 1,
        after_step: StepHook | Sequence[StepHook] = (),
        on_epoch_end: EpochCallback | None = None,
    ) -> list[SampleResult]:
        """`run` for async callers, on their event loop."""
        return await self.run_epochs_async(
            _samples(samples),
            epochs=epochs,
            workers=workers,
            make_context=_context_for,
            after_step=after_step,
            on_epoch_end=on_epoch_end,
        )

    def evaluate(
        self, samples: Iterable[Sample | str], *, workers: int = 1, after_step: StepHook | Sequence[StepHook] = ()
    ) -> list[SampleResult]:
        """Answer and judge every sample once, without learning: AgentStep (skills injected by the
        same policy, `used_count` counted) -> EvaluateStep. One result per sample; its
        `output.trace` holds the verdict. Raises as `run` does."""
        return run_blocking(
            self.evaluate_async(samples, workers=workers, after_step=after_step),
            method="ACE.evaluate",
            alternative="ace.evaluate_async",
        )

    async def evaluate_async(
        self, samples: Iterable[Sample | str], *, workers: int = 1, after_step: StepHook | Sequence[StepHook] = ()
    ) -> list[SampleResult]:
        """`evaluate` for async callers, on their event loop."""
        return await self._one_pass(self.head, samples, workers=workers, after_step=after_step)

    def validate(
        self, samples: Iterable[Sample | str], *, workers: int = 1, after_step: StepHook | Sequence[StepHook] = ()
    ) -> list[SampleResult]:
        """Answer every sample once with the skills as they are now and record their counterexamples
        (`CounterexampleStep`) and confirmations (`ConfirmationStep`), as the loop was built to,
        learning nothing else: after training, a pass over the training samples finds the tasks the
        learned skills break or fix, also those answered before the skill existed. One result per
        sample; `output.learning_skipped` is set exactly on the samples that were counterexamples,
        and says of which skills. Raises UsageError unless the loop was built with
        `counterexamples=True` or `confirmations=True`, else as `run` does."""
        return run_blocking(
            self.validate_async(samples, workers=workers, after_step=after_step),
            method="ACE.validate",
            alternative="ace.validate_async",
        )

    async def validate_async(
        self, samples: Iterable[Sample | str], *, workers: int = 1, after_step: StepHook | Sequence[StepHook] = ()
    ) -> list[SampleResult]:
        """`validate` for async callers, on their event loop."""
        if self.checks is None:
            raise UsageError(
                "validate needs a loop built with ACE.from_roles(counterexamples=True) or (confirmations=True)"
            )
        return await self._one_pass(self.checks, samples, workers=workers, after_step=after_step)

    async def _one_pass(
        self,
        pipeline: Pipeline,
        samples: Iterable[Sample | str],
        *,
        workers: int,
        after_step: StepHook | Sequence[StepHook],
    ) -> list[SampleResult]:
        """Every sample once through `pipeline`, learning nothing the pipeline does not."""
        return await self.run_epochs_async(
            _samples(samples),
            epochs=1,
            workers=workers,
            make_context=_context_for,
            after_step=after_step,
            pipeline=pipeline,
        )


def _follows(matcher: SkillMatcher, skillbook: Skillbook) -> bool:
    followed = matcher.skillbook
    return followed is skillbook or (isinstance(followed, SkillbookView) and followed.is_view_of(skillbook))


def _samples(samples: Iterable[Sample | str]) -> list[Sample]:
    if isinstance(samples, str):
        raise TypeError(f"samples must be a list of samples or questions, not one string; pass [{samples[:40]!r}]")
    return [sample if isinstance(sample, Sample) else Sample(question=sample) for sample in samples]


def _context_for(sample: Sample) -> ACEStepContext:
    return ACEStepContext(sample=sample)
