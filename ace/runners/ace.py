"""`ACE`: the full loop — the agent answers, the environment judges, the loop learns in the background."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from typing_extensions import Unpack

from ace.pipeline import SampleResult
from ace.retrieval.matching import SkillMatcher
from ace.roles import AgentLike, ReflectorLike, SkillManagerLike
from ace.runners._runner import Runner
from ace.skillbook import Skillbook, SkillbookView
from ace.steps import ACEStepContext, AgentStep, EvaluateStep, Sample, TailOptions, TaskEnvironment

__all__ = ["ACE"]


class ACE(Runner):
    """AgentStep -> EvaluateStep -> ReflectStep -> UpdateStep [-> dedup] [-> checkpoint] [-> extra].

    Build it with `ACE.from_roles(...)`; `run(samples, epochs=..., workers=...)` returns one
    `SampleResult` per sample per epoch; `skillbook` is the skillbook being learned.
    """

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
        extra_steps: Sequence[Any] | None = None,
        **options: Unpack[TailOptions],
    ) -> ACE:
        """Assemble the loop. `matcher` chooses the skills injected per task (default: every
        active skill); `environment` gives feedback (default: none); `options` are the learning
        tail's (`reflect_workers`, `dedup_manager`, `dedup_interval`, `checkpoint_dir`,
        `checkpoint_interval`)."""
        skillbook = skillbook if skillbook is not None else Skillbook()
        if matcher is not None and not _follows(matcher, skillbook):
            raise ValueError(
                "the matcher follows another skillbook than the one being learned; build it as "
                "SkillMatcher(skillbook) and pass that same skillbook to from_roles"
            )
        head = [AgentStep(agent, skillbook, matcher=matcher), EvaluateStep(environment)]
        pipeline = cls.assemble(
            "ACE", head, reflector=reflector, skill_manager=skill_manager, skillbook=skillbook,
            extra_steps=extra_steps, options=options,
        )
        return cls(pipeline, skillbook)

    def run(self, samples: Iterable[Sample | str], *, epochs: int = 1, workers: int = 1) -> list[SampleResult]:
        """Answer and learn from every sample, `epochs` times; learning of an epoch finishes before
        the next epoch starts. A plain string is a `Sample` with that question. Raises TypeError
        when `samples` is itself a string (it would be read as one sample per character), and
        `PipelineError` inside a running event loop (await `run_async` there)."""
        return self.run_epochs(_samples(samples), epochs=epochs, workers=workers, make_context=_context_for)

    async def run_async(
        self, samples: Iterable[Sample | str], *, epochs: int = 1, workers: int = 1
    ) -> list[SampleResult]:
        """`run` for async callers, on their event loop."""
        return await self.run_epochs_async(_samples(samples), epochs=epochs, workers=workers, make_context=_context_for)


def _follows(matcher: SkillMatcher, skillbook: Skillbook) -> bool:
    followed = matcher.skillbook
    return followed is skillbook or (isinstance(followed, SkillbookView) and followed.is_view_of(skillbook))


def _samples(samples: Iterable[Sample | str]) -> list[Sample]:
    if isinstance(samples, str):
        raise TypeError(f"samples must be a list of samples or questions, not one string; pass [{samples[:40]!r}]")
    return [sample if isinstance(sample, Sample) else Sample(question=sample) for sample in samples]


def _context_for(sample: Sample) -> ACEStepContext:
    return ACEStepContext(sample=sample)
