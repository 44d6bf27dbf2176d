"""Small explicit steps and concurrency probes shared by the pipeline engine tests."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from ace.pipeline import StepContext, StepEvent

GATE_TIMEOUT = 10.0
"""How long a probe waits for its peers before failing the test (a hang guard, not a timing check)."""


@dataclass(frozen=True)
class NumberContext(StepContext):
    """A context with a few fields for the test steps to read and write."""

    x: int = 0
    """A number the steps transform."""
    y: int = 0
    """A second number, written by some steps."""
    log: tuple[str, ...] = ()
    """Names of the steps that ran, in order."""


def contexts(count: int) -> list[NumberContext]:
    """`count` inputs whose sample and x are their position."""
    return [NumberContext(sample=i, x=i) for i in range(count)]


class AddOne:
    """Sync step: x += 1."""

    requires = frozenset({"x"})
    provides = frozenset({"x", "log"})

    def __init__(self, name: str = "AddOne") -> None:
        self.name = name

    def __call__(self, ctx: NumberContext) -> NumberContext:
        return ctx.replace(x=ctx.x + 1, log=(*ctx.log, self.name))


class AsyncDouble:
    """Async step: y = 2 * x."""

    requires = frozenset({"x"})
    provides = frozenset({"y", "log"})

    def __init__(self, name: str = "AsyncDouble") -> None:
        self.name = name

    async def __call__(self, ctx: NumberContext) -> NumberContext:
        await asyncio.sleep(0)
        return ctx.replace(y=2 * ctx.x, log=(*ctx.log, self.name))


class FailOn:
    """Sync step that raises ValueError for the given samples and passes the others through."""

    requires = frozenset({"x"})
    provides = frozenset({"log"})

    def __init__(self, samples: set[int], name: str = "FailOn") -> None:
        self.samples = samples
        self.name = name

    def __call__(self, ctx: NumberContext) -> NumberContext:
        if ctx.sample in self.samples:
            raise ValueError(f"sample {ctx.sample} rejected")
        return ctx.replace(log=(*ctx.log, self.name))


class InFlightCounter:
    """Thread-safe count of calls currently inside a step, and the maximum seen."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.current = 0
        self.maximum = 0

    def enter(self) -> None:
        with self._lock:
            self.current += 1
            self.maximum = max(self.maximum, self.current)

    def leave(self) -> None:
        with self._lock:
            self.current -= 1


class StepsInFlight:
    """Counts step executions in flight per step name, as the engine dispatches them: pass
    `before` / `after` as the run's hooks. Hooks run on the event loop thread, so this count does
    not depend on when worker threads happen to be scheduled."""

    def __init__(self) -> None:
        self._current: dict[str, int] = {}
        self.maximum: dict[str, int] = {}

    def before(self, event: StepEvent) -> None:
        self._current[event.step] = self._current.get(event.step, 0) + 1
        self.maximum[event.step] = max(self.maximum.get(event.step, 0), self._current[event.step])

    def after(self, event: StepEvent) -> None:
        self._current[event.step] -= 1


class SyncProbe:
    """Sync step counting calls in flight. With `parties`, each call waits until that many calls
    are inside the step together, so the step only completes if the engine allows that much
    concurrency (a broken barrier fails the sample)."""

    requires = frozenset()
    provides = frozenset()

    def __init__(
        self,
        name: str = "SyncProbe",
        *,
        parties: int | None = None,
        max_workers: int | None = None,
        async_boundary: bool = False,
    ) -> None:
        self.name = name
        self.max_workers = max_workers
        self.async_boundary = async_boundary
        self.counter = InFlightCounter()
        self.barrier = threading.Barrier(parties, timeout=GATE_TIMEOUT) if parties else None

    def __call__(self, ctx: StepContext) -> StepContext:
        self.counter.enter()
        try:
            if self.barrier is not None:
                self.barrier.wait()
        finally:
            self.counter.leave()
        return ctx


class AsyncProbe:
    """Async counterpart of `SyncProbe`, gated by an asyncio barrier."""

    requires = frozenset()
    provides = frozenset()

    def __init__(self, name: str = "AsyncProbe", *, parties: int | None = None, max_workers: int | None = None) -> None:
        self.name = name
        self.max_workers = max_workers
        self.counter = InFlightCounter()
        self.barrier = asyncio.Barrier(parties) if parties else None

    async def __call__(self, ctx: StepContext) -> StepContext:
        self.counter.enter()
        try:
            if self.barrier is not None:
                await asyncio.wait_for(self.barrier.wait(), GATE_TIMEOUT)
            await asyncio.sleep(0)
        finally:
            self.counter.leave()
        return ctx


class GatedStep:
    """Sync step that blocks until the test opens its gate; `entered` is released once per call
    started, and `finished` lists the samples it completed."""

    requires = frozenset({"x"})
    provides = frozenset({"y"})

    def __init__(self, name: str = "Gated", *, async_boundary: bool = False, max_workers: int | None = None) -> None:
        self.name = name
        self.async_boundary = async_boundary
        self.max_workers = max_workers
        self.gate = threading.Event()
        self.entered = threading.Semaphore(0)
        self.finished: list[int] = []

    def __call__(self, ctx: NumberContext) -> NumberContext:
        self.entered.release()
        if not self.gate.wait(GATE_TIMEOUT):
            raise TimeoutError("test never opened the gate")
        self.finished.append(ctx.sample)
        return ctx.replace(y=ctx.x * 10)
