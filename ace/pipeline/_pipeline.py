"""`Pipeline`: an ordered, validated sequence of steps, run over many samples concurrently."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from ace import tracing
from ace.pipeline._context import CancellationToken, StepContext
from ace.pipeline._engine import refuse_running_loop, run_blocking
from ace.pipeline._errors import PipelineCancelled, PipelineConfigError, PipelineOrderError
from ace.pipeline._execution import SAMPLE_RUN, SampleRun, execute_step, execute_steps
from ace.pipeline._hooks import StepHook, check_hooks
from ace.pipeline._result import SampleResult
from ace.pipeline._step import Step, StepSpec, describe, inspect_step

__all__ = ["Pipeline"]


class Pipeline:
    """Steps run in order on each sample; itself a step, so pipelines nest.

    Construction validates the wiring and raises `PipelineConfigError` (not a step, two async
    boundaries, a nested pipeline with a boundary) or `PipelineOrderError` (a step requires a field
    only a later step provides). `requires` is what the steps need from outside (fields no earlier
    step provides); `provides` is the union of what they write.

    A step with `async_boundary = True` splits the pipeline: `run` returns once every sample has
    passed the steps before it, and the boundary step and those after it continue in the
    background until `wait_for_background`. A pipeline object can be run any number of times.
    """

    def __init__(self, steps: Sequence[Step[Any]], *, name: str = "Pipeline") -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Pipeline name must be a non-empty str; got {describe(name)}")
        if not isinstance(steps, Sequence) or isinstance(steps, str):
            raise TypeError(f"Pipeline {name!r} expects a list of steps; got {describe(steps)}")
        if not steps:
            raise PipelineConfigError(f"Pipeline {name!r} has no steps; give it at least one")
        specs = [inspect_step(step, f"step {i} of Pipeline {name!r}") for i, step in enumerate(steps)]
        _check_nested_boundaries(specs, name)
        _check_order(specs, name)
        boundary = _boundary_index(specs, name)
        self.name = name
        """The pipeline's name when used as a step (in spans, hooks and `failed_at`)."""
        self.requires: frozenset[str] = _external_requirements(specs)
        """Fields the steps read that no earlier step of this pipeline provides."""
        self.provides: frozenset[str] = frozenset().union(*(spec.provides for spec in specs))
        """Every field some step of this pipeline writes."""
        self._specs = tuple(specs)
        self._foreground = self._specs[:boundary]
        self._background = self._specs[boundary:]
        self._field_users = {f: spec.name for spec in reversed(specs) for f in spec.requires | spec.provides}
        self._checked_context_types: set[type] = set()
        self._pending: dict[asyncio.Task[None], concurrent.futures.Future[None]] = {}
        self._pending_lock = threading.Lock()

    @property
    def steps(self) -> tuple[Step[Any], ...]:
        """The steps, in order."""
        return tuple(spec.step for spec in self._specs)

    @property
    def boundary_step(self) -> str | None:
        """Name of the async boundary step, or None if every step runs in the foreground."""
        return self._background[0].name if self._background else None

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}: {' -> '.join(spec.name for spec in self._specs)})"

    async def __call__(self, ctx: StepContext) -> StepContext:
        """Run every step on `ctx`, background part included, and return the final context.

        This is how a pipeline works as a step of another pipeline; errors propagate unchanged.
        """
        return await execute_steps(self._specs, ctx)

    def run(
        self,
        contexts: Iterable[StepContext],
        *,
        workers: int = 1,
        cancel: CancellationToken | None = None,
        before_step: StepHook | Sequence[StepHook] = (),
        after_step: StepHook | Sequence[StepHook] = (),
    ) -> list[SampleResult]:
        """Blocking form of `run_async`, for synchronous callers.

        Runs on the engine's own event loop, where background steps keep going after this
        returns. Raises `PipelineError` if called from a running event loop: await `run_async`.
        """
        return run_blocking(
            self.run_async(contexts, workers=workers, cancel=cancel, before_step=before_step, after_step=after_step),
            method="Pipeline.run",
            alternative="pipeline.run_async",
        )

    async def run_async(
        self,
        contexts: Iterable[StepContext],
        *,
        workers: int = 1,
        cancel: CancellationToken | None = None,
        before_step: StepHook | Sequence[StepHook] = (),
        after_step: StepHook | Sequence[StepHook] = (),
    ) -> list[SampleResult]:
        """Run every context through the steps; return one `SampleResult` per input, in order.

        At most `workers` samples are in the foreground part at once. A sample's failure is
        recorded on its result and never affects another sample. Results of samples that reached
        the async boundary are `pending` until their background steps finish. `cancel` is checked
        before each step; hooks observe each step execution. Raises `TypeError` /
        `PipelineConfigError` for bad arguments, before any step runs.
        """
        inputs = self._check_inputs(contexts)
        if isinstance(workers, bool) or not isinstance(workers, int):
            raise TypeError(f"workers must be an int; got {describe(workers)}")
        if workers < 1:
            raise PipelineConfigError(f"workers must be >= 1; got {workers}")
        if cancel is not None and not isinstance(cancel, CancellationToken):
            raise TypeError(f"cancel must be a CancellationToken or None; got {describe(cancel)}")
        before = check_hooks(before_step, "before_step")
        after = check_hooks(after_step, "after_step")
        results = [SampleResult(sample=ctx) for ctx in inputs]
        slots = asyncio.Semaphore(workers)
        with tracing.span(f"pipeline.run {self.name}", pipeline=self.name, samples=len(results), workers=workers):
            await asyncio.gather(
                *(
                    self._run_sample(result, slots, SampleRun(index, cancel, before, after))
                    for index, result in enumerate(results)
                )
            )
        return results

    def wait_for_background(self, timeout: float | None = None) -> None:
        """Block until every sample that has reached the async boundary so far (every sample of
        each run that has returned) has finished its background steps, completing its
        `SampleResult`. Safe from any thread that is not running an event loop (there, await
        `wait_for_background_async`). Raises `TimeoutError` after `timeout` seconds; the
        background work keeps running."""
        refuse_running_loop("Pipeline.wait_for_background", "pipeline.wait_for_background_async")
        pending = self._pending_snapshot()
        _, not_done = concurrent.futures.wait(pending, timeout)
        if not_done:
            raise _background_timeout(len(not_done), timeout)

    async def wait_for_background_async(self, timeout: float | None = None) -> None:
        """Awaitable form of `wait_for_background`, for async callers."""
        pending = self._pending_snapshot()
        if not pending:
            return
        _, not_done = await asyncio.wait([asyncio.wrap_future(f) for f in pending], timeout=timeout)
        if not_done:
            raise _background_timeout(len(not_done), timeout)

    def _pending_snapshot(self) -> list[concurrent.futures.Future[None]]:
        with self._pending_lock:
            return list(self._pending.values())

    def _check_inputs(self, contexts: Iterable[StepContext]) -> list[StepContext]:
        if isinstance(contexts, StepContext):
            raise TypeError("run expects an iterable of StepContext, got a single StepContext; pass [ctx]")
        if not isinstance(contexts, Iterable) or isinstance(contexts, str):
            raise TypeError(f"run expects an iterable of StepContext; got {describe(contexts)}")
        inputs = list(contexts)
        for index, ctx in enumerate(inputs):
            if not isinstance(ctx, StepContext):
                raise TypeError(f"run input {index} is {describe(ctx)}; expected a StepContext")
            self._check_context_type(type(ctx))
        return inputs

    def _check_context_type(self, context_type: type[StepContext]) -> None:
        if context_type in self._checked_context_types:
            return
        fields = {field.name for field in dataclasses.fields(context_type)}
        for name, step in self._field_users.items():
            if name not in fields:
                raise PipelineConfigError(
                    f"step {step!r} of Pipeline {self.name!r} names context field {name!r}, which "
                    f"{context_type.__name__} does not have; add the field to the context class or "
                    "fix the step's requires/provides"
                )
        self._checked_context_types.add(context_type)

    async def _run_sample(self, result: SampleResult, slots: asyncio.Semaphore, run: SampleRun) -> None:
        SAMPLE_RUN.set(run)
        async with slots:
            try:
                ctx = await execute_steps(self._foreground, result.sample)
            except Exception as error:
                result.error, result.failed_at = error, run.failed_at
                return
        if not self._background:
            result.output = ctx
            return
        result.pending = True
        task = asyncio.get_running_loop().create_task(self._run_background(result, ctx, run))
        done = concurrent.futures.Future[None]()  # waitable from any thread or loop
        with self._pending_lock:
            self._pending[task] = done  # also keeps the task referenced until it ends
        task.add_done_callback(lambda _: self._background_ended(task, done))

    def _background_ended(self, task: asyncio.Task[None], done: concurrent.futures.Future[None]) -> None:
        with self._pending_lock:
            del self._pending[task]
        done.set_result(None)

    async def _run_background(self, result: SampleResult, ctx: StepContext, run: SampleRun) -> None:
        SAMPLE_RUN.set(run)
        step = self._background[0].name
        try:
            for spec in self._background:
                step = spec.name
                ctx = await execute_step(spec, ctx)
        except Exception as error:
            result.error, result.failed_at = error, run.failed_at
        except asyncio.CancelledError:
            # E.g. asyncio.run() ending without wait_for_background_async: say so on the result
            # rather than leave a result that looks finished and has no output.
            result.error = PipelineCancelled(
                f"background step {step!r} was cancelled before it finished (its event loop stopped "
                "or its task was cancelled); await wait_for_background_async() before the loop ends"
            )
            result.failed_at = step
            raise
        else:
            result.output = ctx
        finally:
            result.pending = False


def _background_timeout(count: int, timeout: float | None) -> TimeoutError:
    return TimeoutError(f"{count} sample(s) still in background steps after {timeout} s; they keep running")


def _check_nested_boundaries(specs: list[StepSpec], name: str) -> None:
    for spec in specs:
        if isinstance(spec.step, Pipeline) and spec.step.boundary_step is not None:
            raise PipelineConfigError(
                f"step {spec.name!r} of Pipeline {name!r} is a pipeline with an async boundary at "
                f"{spec.step.boundary_step!r}; a nested pipeline always runs all its steps, so put "
                "the boundary step directly in the outermost pipeline"
            )


def _check_order(specs: list[StepSpec], name: str) -> None:
    provided: set[str] = set()
    for position, spec in enumerate(specs):
        # A step that also provides a field it requires reads it from outside and rewrites it.
        for field in sorted(spec.requires - provided - spec.provides):
            provider = next((later for later in specs[position + 1 :] if field in later.provides), None)
            if provider is not None:
                raise PipelineOrderError(
                    f"in Pipeline {name!r}, step {spec.name!r} requires {field!r}, which only the "
                    f"later step {provider.name!r} provides; move {provider.name!r} before {spec.name!r}"
                )
        provided |= spec.provides


def _boundary_index(specs: list[StepSpec], name: str) -> int:
    boundaries = [i for i, spec in enumerate(specs) if spec.async_boundary]
    if len(boundaries) > 1:
        names = ", ".join(repr(specs[i].name) for i in boundaries)
        raise PipelineConfigError(
            f"Pipeline {name!r} has {len(boundaries)} async boundary steps ({names}); at most one is "
            "allowed — everything from the first one on already runs in the background"
        )
    return boundaries[0] if boundaries else len(specs)


def _external_requirements(specs: list[StepSpec]) -> frozenset[str]:
    provided: set[str] = set()
    required: set[str] = set()
    for spec in specs:
        required |= spec.requires - provided
        provided |= spec.provides
    return frozenset(required)
