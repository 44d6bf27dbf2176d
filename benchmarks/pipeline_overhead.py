"""Prints the pipeline engine's overhead and its concurrency efficiency.

1. Per-sample overhead: 10,000 samples through three no-op steps (async and sync variants).
   Target: < 1 ms per sample.
2. 200 samples through one 100 ms async step at workers=16, against the ideal 200 * 0.1 / 16 =
   1.25 s. Target: within 15%.

Both are measured with spans off (a library user who configured neither logfire nor
OpenTelemetry: `ace.tracing` opens no-op spans) and then on (logfire configured locally: spans
created and processed, nothing sent). Run:
`python benchmarks/pipeline_overhead.py`.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

import logfire

from ace import tracing
from ace.pipeline import Pipeline, StepContext

SAMPLES = 10_000
SLOW_SAMPLES = 200
SLOW_STEP_SECONDS = 0.1
SLOW_WORKERS = 16


@dataclass(frozen=True)
class BenchContext(StepContext):
    value: int = 0


class AsyncNoOp:
    requires = frozenset()
    provides = frozenset()

    def __init__(self, name: str) -> None:
        self.name = name

    async def __call__(self, ctx: BenchContext) -> BenchContext:
        return ctx


class SyncNoOp:
    requires = frozenset()
    provides = frozenset()

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, ctx: BenchContext) -> BenchContext:
        return ctx


class Sleep:
    requires = frozenset()
    provides = frozenset()

    async def __call__(self, ctx: BenchContext) -> BenchContext:
        await asyncio.sleep(SLOW_STEP_SECONDS)
        return ctx


def overhead_ms(step_type: type, workers: int) -> float:
    """Wall time per sample (ms) of SAMPLES samples through three no-op steps."""
    pipeline = Pipeline([step_type(f"noop{i}") for i in range(3)])
    inputs = [BenchContext(sample=i) for i in range(SAMPLES)]
    pipeline.run(inputs[:100], workers=workers)  # warm up: engine loop, thread pool, logfire
    start = time.perf_counter()
    results = pipeline.run(inputs, workers=workers)
    elapsed = time.perf_counter() - start
    assert all(r.ok for r in results)
    return elapsed / SAMPLES * 1000


def slow_step_seconds() -> float:
    """Wall time (s) of SLOW_SAMPLES samples through one 100 ms async step at SLOW_WORKERS."""
    pipeline = Pipeline([Sleep()])
    start = time.perf_counter()
    results = pipeline.run([BenchContext(sample=i) for i in range(SLOW_SAMPLES)], workers=SLOW_WORKERS)
    elapsed = time.perf_counter() - start
    assert all(r.ok for r in results)
    return elapsed


def span_cost_us() -> float:
    """Cost (µs) of one empty `ace.tracing` span, for comparison with the per-step overhead."""
    count = 20_000
    start = time.perf_counter()
    for i in range(count):
        with tracing.span("pipeline.step noop", sample_index=i):
            pass
    return (time.perf_counter() - start) / count * 1e6


def report(label: str) -> None:
    ideal = SLOW_SAMPLES * SLOW_STEP_SECONDS / SLOW_WORKERS
    print(f"\n== spans {label} ==")
    print(f"one empty span: {span_cost_us():.1f} us")
    for step_type, workers in ((AsyncNoOp, 1), (AsyncNoOp, 16), (SyncNoOp, 1), (SyncNoOp, 16)):
        ms = overhead_ms(step_type, workers)
        verdict = "OK" if ms < 1.0 else "OVER TARGET"
        print(
            f"overhead, {SAMPLES} samples x 3 {step_type.__name__} steps, workers={workers:>2}: "
            f"{ms:.3f} ms/sample ({ms / 3 * 1000:.0f} us/step)  [target < 1 ms: {verdict}]"
        )
    wall = slow_step_seconds()
    off = (wall - ideal) / ideal * 100
    verdict = "OK" if abs(off) <= 15 else "OUTSIDE TARGET"
    print(
        f"{SLOW_SAMPLES} samples x {SLOW_STEP_SECONDS * 1000:.0f} ms async step, workers={SLOW_WORKERS}: "
        f"{wall:.3f} s vs ideal {ideal:.2f} s ({off:+.1f}%)  [target within 15%: {verdict}]"
    )


def main() -> None:
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (figures are noisy on a busy machine)")
    report("off (nothing configured: the library default)")
    logfire.configure(send_to_logfire=False, console=False)
    report("on (logfire configured locally: spans processed, not exported)")


if __name__ == "__main__":
    main()
