"""What every runner shares: the learning settings, the epoch loop with its barrier, progress."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ace.deduplication import DeduplicationManager
from ace.pipeline import Pipeline, SampleResult, StepEvent
from ace.roles import ReflectorLike, SkillManagerLike
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext, learning_tail

__all__ = ["LearningSettings", "run_epochs"]


@dataclasses.dataclass(frozen=True)
class LearningSettings:
    """The learning half of a runner: roles, the skillbook, and the optional background steps."""

    reflector: ReflectorLike
    """Analyses each trace (a Reflector or a RecursiveReflector)."""
    skill_manager: SkillManagerLike
    """Turns reflections into skillbook mutations."""
    skillbook: Skillbook
    """The skillbook being learned (mutated in place)."""
    dedup_manager: DeduplicationManager | None = None
    """Consolidates duplicate skills every `dedup_interval` samples, when given."""
    dedup_interval: int = 10
    """Samples between deduplication runs."""
    checkpoint_dir: str | Path | None = None
    """Folder for `checkpoint_<n>.json` / `latest.json`, when given."""
    checkpoint_interval: int = 10
    """Samples between checkpoints."""
    extra_steps: Sequence[Any] = ()
    """Steps appended after the learning tail (they run in the background too)."""

    def tail(self) -> list[object]:
        """The background steps: the learning tail plus `extra_steps`."""
        return [
            *learning_tail(
                self.reflector,
                self.skill_manager,
                self.skillbook,
                dedup_manager=self.dedup_manager,
                dedup_interval=self.dedup_interval,
                checkpoint_dir=self.checkpoint_dir,
                checkpoint_interval=self.checkpoint_interval,
            ),
            *self.extra_steps,
        ]


def run_epochs(
    pipeline: Pipeline,
    inputs: Sequence[Any],
    skillbook: Skillbook,
    *,
    epochs: int,
    workers: int,
    make_context: Callable[[Any], ACEStepContext],
) -> list[SampleResult]:
    """Run `inputs` through `pipeline` `epochs` times; epoch e+1 starts only after every sample of
    epoch e has finished learning (the background part). Returns all results, epoch by epoch.

    `make_context(item)` builds the base context of an input; the epoch fields are filled here.
    A progress bar shows finished samples when stderr is a terminal.
    """
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1; got {epochs}")
    total = len(inputs)
    results: list[SampleResult] = []
    last_step = pipeline.steps[-1]
    last_name = getattr(last_step, "name", type(last_step).__name__)
    with tqdm(total=total * epochs, desc="ace", unit="sample", disable=not sys.stderr.isatty()) as bar:

        def count_finished(event: StepEvent) -> None:
            if event.error is not None or event.step == last_name:
                bar.update(1)

        for epoch in range(1, epochs + 1):
            contexts = [
                make_context(item).replace(
                    skillbook=skillbook.view(),
                    epoch=epoch,
                    total_epochs=epochs,
                    step_index=index,
                    total_steps=total,
                    global_sample_index=(epoch - 1) * total + index,
                )
                for index, item in enumerate(inputs)
            ]
            epoch_results = pipeline.run(contexts, workers=workers, after_step=count_finished)
            pipeline.wait_for_background()
            results.extend(epoch_results)
    return results
