"""Running one step on one sample: cancellation check, per-step limit, hooks, span, thread hop.

Every step execution — top-level, inside a nested pipeline, inside a branch, in the background —
goes through `execute_step`, so all of them get the same treatment. The state of the sample being
run travels in a context variable, which asyncio copies into tasks and `run_in_thread` into worker
threads; a nested pipeline therefore sees its outer run's token and hooks without extra arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from ace import tracing
from ace.pipeline._context import CancellationToken, StepContext
from ace.pipeline._engine import run_in_thread
from ace.pipeline._errors import PipelineCancelled
from ace.pipeline._hooks import StepEvent, StepHook, call_hooks
from ace.pipeline._step import StepSpec

__all__ = ["SAMPLE_RUN", "SampleRun", "execute_step", "execute_steps"]


@dataclass(eq=False)
class SampleRun:
    """The run-wide settings and the failure record of one sample."""

    index: int | None = None
    """Position of the sample in the run's input (None outside a run)."""
    token: CancellationToken | None = None
    """The run's cancellation token."""
    before_step: tuple[StepHook, ...] = ()
    """Hooks called before each step."""
    after_step: tuple[StepHook, ...] = ()
    """Hooks called after each step, whether it succeeded or failed."""
    failed_at: str | None = None
    """Name of the innermost step the latest error escaped from."""
    _failure: Exception | None = None

    def note_failure(self, step: str, error: Exception) -> None:
        """Record where `error` was raised; an error already recorded keeps its innermost step, so
        a failure inside a nested pipeline is attributed to the inner step, not the pipeline."""
        if error is not self._failure:
            self._failure = error
            self.failed_at = step


SAMPLE_RUN: ContextVar[SampleRun | None] = ContextVar("ace_pipeline_sample_run", default=None)
"""The sample being run in this task/thread; set by `Pipeline.run_async` for each sample."""


async def execute_step(spec: StepSpec, ctx: StepContext) -> StepContext:
    """Run one step on `ctx` and return its output context.

    Raises `PipelineCancelled` if the run was cancelled, `TypeError` if the step returned something
    other than a `StepContext`, and otherwise whatever the step raised.
    """
    run = SAMPLE_RUN.get() or SampleRun()
    if run.token is not None and run.token.cancelled:
        error = PipelineCancelled(f"run cancelled before step {spec.name!r}")
        run.note_failure(spec.name, error)
        raise error
    limiter = spec.limiter()
    if limiter is None:
        return await _observed_call(spec, ctx, run)
    async with limiter:
        return await _observed_call(spec, ctx, run)


async def execute_steps(specs: Sequence[StepSpec], ctx: StepContext) -> StepContext:
    """Run `specs` in order, each on the previous one's output."""
    for spec in specs:
        ctx = await execute_step(spec, ctx)
    return ctx


async def _observed_call(spec: StepSpec, ctx: StepContext, run: SampleRun) -> StepContext:
    if run.before_step:
        call_hooks(run.before_step, StepEvent(spec.name, run.index, ctx))
    try:
        inherited = {tracing.STEP: spec.name, tracing.SAMPLE_INDEX: run.index, **ctx.span_attributes()}
        with tracing.span_attributes(**inherited), tracing.span(f"pipeline.step {spec.name}"):
            if spec.is_async:
                output = await spec.step(ctx)  # type: ignore[misc]
            else:
                output = await run_in_thread(spec.step, ctx)
            if not isinstance(output, StepContext):
                raise TypeError(
                    f"step {spec.name!r} returned {type(output).__name__}, not a StepContext; a step "
                    "must return the new context (e.g. `return ctx.replace(...)`) and an async step "
                    "must be written as `async def __call__`"
                )
    except Exception as error:
        run.note_failure(spec.name, error)
        if run.after_step:
            call_hooks(run.after_step, StepEvent(spec.name, run.index, ctx, error=error))
        raise
    if run.after_step:
        call_hooks(run.after_step, StepEvent(spec.name, run.index, ctx, output=output))
    return output
