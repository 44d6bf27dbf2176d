"""The async boundary: run() returns after the foreground; wait_for_background completes results."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pipeline_helpers import AddOne, FailOn, GatedStep, NumberContext, StepsInFlight, SyncProbe, contexts

from ace.pipeline import Pipeline, PipelineCancelled, PipelineError, StepContext


def test_run_returns_pending_results_that_wait_for_background_completes_in_place() -> None:
    learn = GatedStep("Learn", async_boundary=True)
    pipeline = Pipeline([AddOne(), learn, AddOne("After")])
    results = pipeline.run(contexts(3), workers=2)
    assert all(r.pending and r.output is None and not r.ok for r in results)
    assert learn.finished == []
    learn.gate.set()
    pipeline.wait_for_background()
    assert all(r.ok for r in results)
    assert [r.output.y for r in results] == [10, 20, 30]
    assert all(r.output.log == ("AddOne", "After") for r in results)


def test_background_failure_is_recorded_on_the_same_result() -> None:
    pipeline = Pipeline([AddOne(), SyncProbe("Reflect", async_boundary=True), FailOn({1}, name="Update")])
    results = pipeline.run(contexts(3))
    pipeline.wait_for_background()
    assert [r.failed_at for r in results] == [None, "Update", None]
    assert isinstance(results[1].error, ValueError) and results[1].output is None
    assert not results[1].pending


def test_foreground_failure_never_reaches_the_background() -> None:
    learn = GatedStep("Learn", async_boundary=True)
    learn.gate.set()
    pipeline = Pipeline([FailOn({0}, name="Act"), learn])
    results = pipeline.run(contexts(2))
    assert (results[0].pending, results[0].failed_at) == (False, "Act")
    pipeline.wait_for_background()
    assert learn.finished == [1]


def test_background_step_max_workers_serialises_it_while_an_unbounded_one_runs_all_samples() -> None:
    reflect = SyncProbe("Reflect", parties=6, async_boundary=True)
    update = SyncProbe("Update", max_workers=1)
    in_flight = StepsInFlight()
    pipeline = Pipeline([AddOne(), reflect, update])
    results = pipeline.run(contexts(6), workers=6, before_step=in_flight.before, after_step=in_flight.after)
    pipeline.wait_for_background()
    assert all(r.ok for r in results), [r.error for r in results]
    assert in_flight.maximum == {"AddOne": 6, "Reflect": 6, "Update": 1}


def test_max_workers_holds_across_runs_whose_background_parts_overlap() -> None:
    update = SyncProbe("Update", max_workers=1, async_boundary=True)
    in_flight = StepsInFlight()
    pipeline = Pipeline([update])
    first = pipeline.run(contexts(4), workers=4, before_step=in_flight.before, after_step=in_flight.after)
    second = pipeline.run(contexts(4), workers=4, before_step=in_flight.before, after_step=in_flight.after)
    pipeline.wait_for_background()
    assert all(r.ok for r in first + second)
    assert in_flight.maximum == {"Update": 1}


def test_epochs_are_barriers_when_each_run_is_followed_by_wait_for_background() -> None:
    events: list[tuple[int, str]] = []
    lock = threading.Lock()

    class Record:
        requires = frozenset()
        provides = frozenset()

        def __init__(self, name: str, *, async_boundary: bool = False) -> None:
            self.name = name
            self.async_boundary = async_boundary

        def __call__(self, ctx: StepContext) -> StepContext:
            with lock:
                events.append((ctx.metadata["epoch"], self.name))
            return ctx

    learn = GatedStep("Learn", async_boundary=True)
    pipeline = Pipeline([Record("Act"), learn, Record("Learned")])
    for epoch in (1, 2):
        epoch_inputs = [NumberContext(sample=i, x=i, metadata={"epoch": epoch}) for i in range(3)]
        results = pipeline.run(epoch_inputs, workers=3)
        assert all(r.pending for r in results)
        learn.gate.set()
        pipeline.wait_for_background()
        learn.gate.clear()
        assert all(r.ok for r in results)
    last_of_epoch_1 = max(i for i, event in enumerate(events) if event[0] == 1)
    first_of_epoch_2 = min(i for i, event in enumerate(events) if event[0] == 2)
    assert events[last_of_epoch_1][1] == "Learned"
    assert last_of_epoch_1 < first_of_epoch_2
    assert events.count((1, "Learned")) == 3


async def test_async_callers_run_epochs_as_barriers_with_wait_for_background_async() -> None:
    gate = asyncio.Event()
    learned: list[tuple[int, int]] = []

    class Learn:
        requires = frozenset()
        provides = frozenset()
        async_boundary = True

        async def __call__(self, ctx: StepContext) -> StepContext:
            await asyncio.wait_for(gate.wait(), 10)
            learned.append((ctx.metadata["epoch"], ctx.sample))
            return ctx

    pipeline = Pipeline([AddOne(), Learn()])
    for epoch in (1, 2):
        results = await pipeline.run_async(
            [NumberContext(sample=i, metadata={"epoch": epoch}) for i in range(3)], workers=2
        )
        assert all(r.pending for r in results)
        gate.set()
        await pipeline.wait_for_background_async()
        gate.clear()
        assert all(r.ok for r in results)
        assert sorted(learned) == [(e, i) for e in range(1, epoch + 1) for i in range(3)]


def test_wait_for_background_raises_timeout_error_and_leaves_work_running() -> None:
    learn = GatedStep("Learn", async_boundary=True)
    pipeline = Pipeline([learn])
    results = pipeline.run(contexts(2))
    with pytest.raises(TimeoutError, match="2 sample"):
        pipeline.wait_for_background(timeout=0.01)
    learn.gate.set()
    pipeline.wait_for_background()
    assert all(r.ok for r in results)


def test_wait_for_background_can_be_called_from_several_threads_at_once() -> None:
    learn = GatedStep("Learn", async_boundary=True)
    pipeline = Pipeline([learn])
    results = pipeline.run(contexts(3))
    seen_pending: list[bool] = []

    def wait() -> None:
        pipeline.wait_for_background()
        seen_pending.append(any(r.pending for r in results))

    waiters = [threading.Thread(target=wait) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    learn.gate.set()
    for waiter in waiters:
        waiter.join(10)
    assert seen_pending == [False, False, False]


async def test_blocking_wait_for_background_inside_a_running_loop_raises() -> None:
    pipeline = Pipeline([AddOne()])
    with pytest.raises(PipelineError, match=r"await pipeline.wait_for_background_async"):
        pipeline.wait_for_background()


def test_background_cut_short_by_the_end_of_asyncio_run_is_reported_as_cancelled() -> None:
    class NeverFinishes:
        requires = frozenset()
        provides = frozenset()
        async_boundary = True

        async def __call__(self, ctx: StepContext) -> StepContext:
            await asyncio.Event().wait()
            return ctx

    pipeline = Pipeline([AddOne(), NeverFinishes()])

    async def forget_to_wait() -> list:
        results = await pipeline.run_async(contexts(2))
        await asyncio.sleep(0)  # let the background steps start
        return results

    results = asyncio.run(forget_to_wait())
    assert all(not r.pending and r.failed_at == "NeverFinishes" for r in results)
    assert all(isinstance(r.error, PipelineCancelled) and "wait_for_background_async" in str(r.error) for r in results)
    pipeline.wait_for_background()  # nothing left to wait for
