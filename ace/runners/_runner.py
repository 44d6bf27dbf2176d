"""What every runner shares: assembling head + learning tail, and the epoch loop with its barrier."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from ace.pipeline import Pipeline, SampleResult, StepEvent, run_blocking
from ace.roles import ReflectorLike, SkillManagerLike
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext, TailOptions, learning_tail

__all__ = ["Runner"]


class Runner:
    """A pipeline `head -> learning tail -> extra steps` over one skillbook, run in epochs."""

    def __init__(self, pipeline: Pipeline, skillbook: Skillbook) -> None:
        self.pipeline = pipeline
        """The assembled pipeline (inspect `pipeline.steps` to see the wiring)."""
        self.skillbook = skillbook
        """The skillbook the runner learns into (mutated in place)."""

    @staticmethod
    def assemble(
        name: str,
        head: Sequence[Any],
        *,
        reflector: ReflectorLike,
        skill_manager: SkillManagerLike,
        skillbook: Skillbook,
        extra_steps: Sequence[Any] | None,
        options: TailOptions,
    ) -> Pipeline:
        """The pipeline `head + learning_tail(...) + extra_steps`; raises the pipeline's
        construction errors for a mis-wired step."""
        tail = learning_tail(reflector, skill_manager, skillbook, **options)
        return Pipeline([*head, *tail, *(extra_steps or ())], name=name)

    def run_epochs(
        self, inputs: Sequence[Any], *, epochs: int, workers: int, make_context: Callable[[Any], ACEStepContext]
    ) -> list[SampleResult]:
        """Blocking form of `run_epochs_async`, on the engine's event loop (the same loop for every
        call). Raises `PipelineError` when called from a running event loop."""
        return run_blocking(
            self.run_epochs_async(inputs, epochs=epochs, workers=workers, make_context=make_context),
            method=f"{type(self).__name__}.run",
            alternative=f"{type(self).__name__.lower()}.run_async",
        )

    async def run_epochs_async(
        self, inputs: Sequence[Any], *, epochs: int, workers: int, make_context: Callable[[Any], ACEStepContext]
    ) -> list[SampleResult]:
        """Run `inputs` through the pipeline `epochs` times; epoch e+1 starts only after every
        sample of epoch e has finished learning (the background part). Returns all results, epoch
        by epoch. `make_context(item)` builds an input's base context; epoch fields are filled here.
        A progress bar shows finished samples when stderr is a terminal."""
        if epochs < 1:
            raise ValueError(f"epochs must be >= 1; got {epochs}")
        total = len(inputs)
        results: list[SampleResult] = []
        last = self.pipeline.steps[-1]
        last_name = getattr(last, "name", type(last).__name__)
        with tqdm(total=total * epochs, desc=self.pipeline.name, unit="sample", disable=not sys.stderr.isatty()) as bar:

            def count_finished(event: StepEvent) -> None:
                if event.error is not None or event.step == last_name:
                    bar.update(1)

            for epoch in range(1, epochs + 1):
                contexts = [
                    make_context(item).replace(
                        skillbook=self.skillbook.view(),
                        epoch=epoch,
                        total_epochs=epochs,
                        step_index=index,
                        total_steps=total,
                        global_sample_index=(epoch - 1) * total + index,
                    )
                    for index, item in enumerate(inputs)
                ]
                epoch_results = await self.pipeline.run_async(contexts, workers=workers, after_step=count_finished)
                await self.pipeline.wait_for_background_async()
                results.extend(epoch_results)
        return results
