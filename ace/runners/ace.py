"""`ACE`: the full loop — the agent answers, the environment judges, the loop learns in the background."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ace.deduplication import DeduplicationManager
from ace.pipeline import Pipeline, SampleResult
from ace.retrieval.matching import SkillMatcher
from ace.roles import AgentLike, ReflectorLike, SkillManagerLike
from ace.runners._loop import LearningSettings, run_epochs
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext, AgentStep, EvaluateStep, Sample, TaskEnvironment

__all__ = ["ACE"]


class ACE:
    """AgentStep -> EvaluateStep -> ReflectStep -> UpdateStep [-> dedup] [-> checkpoint] [-> extra].

    Build it with `ACE.from_roles(...)`; `run(samples, epochs=..., workers=...)` returns one
    `SampleResult` per sample per epoch; `skillbook` is the skillbook being learned.
    """

    def __init__(self, pipeline: Pipeline, skillbook: Skillbook) -> None:
        self.pipeline = pipeline
        """The assembled pipeline (inspect `pipeline.steps` to see the wiring)."""
        self.skillbook = skillbook
        """The skillbook the loop learns into."""

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
        dedup_manager: DeduplicationManager | None = None,
        dedup_interval: int = 10,
        checkpoint_dir: str | Path | None = None,
        checkpoint_interval: int = 10,
        extra_steps: Sequence[Any] | None = None,
    ) -> ACE:
        """Assemble the loop. `matcher` chooses the skills injected per task (default: all active
        skills); `environment` gives feedback (default: none). Raises the pipeline's
        construction errors for a mis-wired `extra_steps`."""
        learning = LearningSettings(
            reflector=reflector,
            skill_manager=skill_manager,
            skillbook=skillbook if skillbook is not None else Skillbook(),
            dedup_manager=dedup_manager,
            dedup_interval=dedup_interval,
            checkpoint_dir=checkpoint_dir,
            checkpoint_interval=checkpoint_interval,
            extra_steps=tuple(extra_steps or ()),
        )
        steps = [AgentStep(agent, learning.skillbook, matcher=matcher), EvaluateStep(environment), *learning.tail()]
        return cls(Pipeline(steps, name="ACE"), learning.skillbook)

    def run(self, samples: Iterable[Sample | str], *, epochs: int = 1, workers: int = 1) -> list[SampleResult]:
        """Answer and learn from every sample, `epochs` times; learning of an epoch finishes before
        the next epoch starts. A plain string is a `Sample` with that question."""
        inputs = [sample if isinstance(sample, Sample) else Sample(question=sample) for sample in samples]
        return run_epochs(
            self.pipeline,
            inputs,
            self.skillbook,
            epochs=epochs,
            workers=workers,
            make_context=lambda sample: ACEStepContext(sample=sample),
        )
