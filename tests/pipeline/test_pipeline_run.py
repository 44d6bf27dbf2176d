"""Pipeline.run / run_async: one result per input, in order, errors isolated, bounded concurrency."""

from __future__ import annotations

import asyncio

import pytest
from pipeline_helpers import (
    AddOne,
    AsyncDouble,
    AsyncProbe,
    FailOn,
    NumberContext,
    StepsInFlight,
    SyncProbe,
    contexts,
)

from ace.pipeline import Pipeline, PipelineConfigError, PipelineError, StepContext


def test_each_input_gets_one_result_in_input_order_with_sync_and_async_steps() -> None:
    inputs = contexts(5)
    results = Pipeline([AddOne(), AsyncDouble()]).run(inputs, workers=3)
    assert [r.sample for r in results] == inputs
    assert [r.output.y for r in results] == [2 * (i + 1) for i in range(5)]
    assert all(r.output.log == ("AddOne", "AsyncDouble") for r in results)


async def test_results_keep_input_order_when_samples_finish_out_of_order() -> None:
    second_done = asyncio.Event()
    finished: list[int] = []

    class FirstWaitsForSecond:
        requires = frozenset()
        provides = frozenset()

        async def __call__(self, ctx: NumberContext) -> NumberContext:
            if ctx.sample == 0:
                await asyncio.wait_for(second_done.wait(), 10)
            else:
                second_done.set()
            finished.append(ctx.sample)
            return ctx

    inputs = contexts(2)
    results = await Pipeline([FirstWaitsForSecond()]).run_async(inputs, workers=2)
    assert finished == [1, 0]
    assert [r.sample for r in results] == inputs


def test_a_failing_sample_records_its_error_and_step_and_does_not_affect_others() -> None:
    results = Pipeline([AddOne(), FailOn({1, 3}, name="Check"), AsyncDouble()]).run(contexts(5), workers=2)
    failed = [r for r in results if not r.ok]
    assert [r.sample.sample for r in failed] == [1, 3]
    assert all(r.failed_at == "Check" and isinstance(r.error, ValueError) and r.output is None for r in failed)
    assert [r.output.y for r in results if r.ok] == [2, 6, 10]
    assert all(r.error is None and r.failed_at is None for r in results if r.ok)


def test_step_returning_something_other_than_a_context_fails_that_sample_with_type_error() -> None:
    class ReturnsDict:
        requires = frozenset()
        provides = frozenset()

        def __call__(self, ctx: StepContext) -> dict:
            return {"x": 1}

    [result] = Pipeline([ReturnsDict()]).run(contexts(1))
    assert isinstance(result.error, TypeError)
    assert "step 'ReturnsDict' returned dict" in str(result.error)
    assert result.failed_at == "ReturnsDict"


@pytest.mark.parametrize("workers", [1, 4])
def test_sync_steps_run_exactly_workers_samples_at_a_time(workers: int) -> None:
    probe = SyncProbe(parties=workers)
    in_flight = StepsInFlight()
    results = Pipeline([probe]).run(
        contexts(3 * workers), workers=workers, before_step=in_flight.before, after_step=in_flight.after
    )
    assert all(r.ok for r in results), [r.error for r in results]
    assert in_flight.maximum == {"SyncProbe": workers}


@pytest.mark.parametrize("workers", [1, 5])
async def test_async_steps_run_exactly_workers_samples_at_a_time(workers: int) -> None:
    probe = AsyncProbe(parties=workers)
    results = await Pipeline([probe]).run_async(contexts(2 * workers), workers=workers)
    assert all(r.ok for r in results), [r.error for r in results]
    assert probe.counter.maximum == workers


def test_step_max_workers_bounds_that_step_below_the_pipeline_workers() -> None:
    limited = SyncProbe("Limited", parties=2, max_workers=2)
    free = SyncProbe("Free", parties=6)
    in_flight = StepsInFlight()
    results = Pipeline([free, limited]).run(
        contexts(6), workers=6, before_step=in_flight.before, after_step=in_flight.after
    )
    assert all(r.ok for r in results), [r.error for r in results]
    assert in_flight.maximum == {"Free": 6, "Limited": 2}


def test_a_pipeline_object_can_be_run_again() -> None:
    pipeline = Pipeline([AddOne(), AsyncDouble()])
    first = pipeline.run(contexts(3))
    second = pipeline.run(contexts(3))
    assert [r.output for r in first] == [r.output for r in second]


def test_run_accepts_any_iterable_of_contexts_and_an_empty_one() -> None:
    pipeline = Pipeline([AddOne()])
    assert [r.output.x for r in pipeline.run(c for c in contexts(2))] == [1, 2]
    assert pipeline.run([]) == []


async def test_run_inside_a_running_event_loop_raises_and_points_to_run_async() -> None:
    pipeline = Pipeline([AddOne()])
    with pytest.raises(PipelineError, match=r"await pipeline.run_async"):
        pipeline.run(contexts(1))
    assert (await pipeline.run_async(contexts(1)))[0].output.x == 1


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"contexts": NumberContext(sample=0)}, TypeError, r"got a single StepContext; pass \[ctx\]"),
        ({"contexts": [NumberContext(sample=0), 7]}, TypeError, r"run input 1 is int 7; expected a StepContext"),
        ({"contexts": 5}, TypeError, r"expects an iterable of StepContext; got int 5"),
        ({"workers": "4"}, TypeError, r"workers must be an int; got str '4'"),
        ({"workers": 0}, PipelineConfigError, r"workers must be >= 1; got 0"),
        ({"cancel": True}, TypeError, r"cancel must be a CancellationToken or None; got bool True"),
        ({"before_step": [print, "log"]}, TypeError, r"before_step contains str 'log', which is not callable"),
    ],
)
def test_bad_run_arguments_raise_before_any_step_runs(arguments: dict, error: type, message: str) -> None:
    probe = SyncProbe()
    arguments = {"contexts": contexts(1), **arguments}
    with pytest.raises(error, match=message):
        Pipeline([probe]).run(**arguments)
    assert probe.counter.maximum == 0
