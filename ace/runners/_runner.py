"""What every runner shares: assembling head + learning tail, and the epoch loop with its barrier."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from ace.errors import UsageError
from ace.models import ModelConfigurationError
from ace.pipeline import Pipeline, SampleResult, StepEvent, StepHook, run_blocking
from ace.roles import ReflectorLike, SkillManagerLike
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext, Recheck, TailOptions, learning_tail

__all__ = ["EpochCallback", "Runner"]

EpochCallback = Callable[[int, list[SampleResult]], None]
"""Called after each epoch's barrier with the 1-based epoch and that epoch's final results."""


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
        recheck: Recheck | None = None,
    ) -> Pipeline:
        """The pipeline `head + learning_tail(...) + extra_steps`; raises the pipeline's
        construction errors for a mis-wired step."""
        tail = learning_tail(reflector, skill_manager, skillbook, recheck=recheck, **options)
        return Pipeline([*head, *tail, *(extra_steps or ())], name=name)

    def run_epochs(
        self,
        inputs: Sequence[Any],
        *,
        epochs: int,
        workers: int,
        make_context: Callable[[Any], ACEStepContext],
        after_step: StepHook | Sequence[StepHook] = (),
        on_epoch_end: EpochCallback | None = None,
    ) -> list[SampleResult]:
        """Blocking form of `run_epochs_async`, on the engine's event loop (the same loop for every
        call). Raises `PipelineError` when called from a running event loop."""
        return run_blocking(
            self.run_epochs_async(
                inputs,
                epochs=epochs,
                workers=workers,
                make_context=make_context,
                after_step=after_step,
                on_epoch_end=on_epoch_end,
            ),
            method=f"{type(self).__name__}.run",
            alternative=f"{type(self).__name__.lower()}.run_async",
        )

    async def run_epochs_async(
        self,
        inputs: Sequence[Any],
        *,
        epochs: int,
        workers: int,
        make_context: Callable[[Any], ACEStepContext],
        after_step: StepHook | Sequence[StepHook] = (),
        on_epoch_end: EpochCallback | None = None,
        pipeline: Pipeline | None = None,
    ) -> list[SampleResult]:
        """Run `inputs` through the pipeline `epochs` times; epoch e+1 starts only after every
        sample of epoch e has finished learning (the background part), and after `on_epoch_end`
        returned. Returns all results, epoch by epoch. `make_context(item)` builds an input's base
        context; epoch fields are filled here. `after_step` hooks observe every step (see
        `Pipeline.run_async`); `pipeline` replaces the runner's own (e.g. its foreground alone).
        On a terminal (stderr), a progress bar counts samples done with every step, and beside it
        those past the foreground (`answered`, e.g. simulations run) and those failed so far.

        Raises `ModelConfigurationError` when every sample of an epoch failed with the same one (a
        missing or refused credential): nothing can work until it is fixed, and a script must not
        end as if it had run."""
        if epochs < 1:
            raise UsageError(f"epochs must be >= 1; got {epochs}")
        pipeline = pipeline or self.pipeline
        results: list[SampleResult] = []
        hooks = [after_step] if callable(after_step) else list(after_step)
        with tqdm(
            total=len(inputs) * epochs, desc=pipeline.name, unit="sample", disable=not sys.stderr.isatty()
        ) as bar:
            progress = _Progress(bar, pipeline)
            for epoch in range(1, epochs + 1):
                contexts = self._epoch_contexts(inputs, make_context, epoch=epoch, epochs=epochs)
                epoch_results = await pipeline.run_async(contexts, workers=workers, after_step=[progress, *hooks])
                await pipeline.wait_for_background_async()
                _raise_if_misconfigured(epoch_results)
                if on_epoch_end is not None:
                    on_epoch_end(epoch, epoch_results)
                results.extend(epoch_results)
        return results

    def _epoch_contexts(
        self, inputs: Sequence[Any], make_context: Callable[[Any], ACEStepContext], *, epoch: int, epochs: int
    ) -> list[ACEStepContext]:
        """Each input's base context with the skillbook view and its place in the run filled in."""
        total = len(inputs)
        return [
            make_context(item).replace(
                skillbook=self.skillbook.view(),
                epoch=epoch,
                total_epochs=epochs,
                sample_index=index,
                samples_per_epoch=total,
                global_sample_index=(epoch - 1) * total + index,
            )
            for index, item in enumerate(inputs)
        ]


class _Progress:
    """The step hook that moves the terminal progress bar: one sample done when its last step
    finished or a step failed; beside the bar, the samples past the foreground (`answered`, when
    the pipeline has a background part) and those failed so far."""

    def __init__(self, bar: tqdm[Any], pipeline: Pipeline) -> None:
        names = [getattr(step, "name", type(step).__name__) for step in pipeline.steps]
        boundary = names.index(pipeline.boundary_step) if pipeline.boundary_step else len(names)
        self._bar = bar
        self._last_foreground, self._last = names[boundary - 1], names[-1]
        self._counts = {"answered": 0, "failed": 0} if boundary < len(names) else {"failed": 0}

    def __call__(self, event: StepEvent) -> None:
        if event.error is None and event.step == self._last_foreground and "answered" in self._counts:
            self._counts["answered"] += 1
        if event.error is not None:
            self._counts["failed"] += 1
        if event.error is not None or event.step == self._last:
            self._bar.update(1)
        self._bar.set_postfix(self._counts, refresh=False)


def _raise_if_misconfigured(results: Sequence[SampleResult]) -> None:
    errors = [result.error for result in results if isinstance(result.error, ModelConfigurationError)]
    if errors and len(errors) == len(results) and len({str(error) for error in errors}) == 1:
        raise errors[0]
