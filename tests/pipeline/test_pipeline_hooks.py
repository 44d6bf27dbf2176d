"""Observation-only hooks around every step; a raising hook is logged and ignored."""

from __future__ import annotations

import logging

import pytest
from pipeline_helpers import AddOne, AsyncDouble, FailOn, contexts

from ace.pipeline import Pipeline, StepEvent


def test_hooks_see_each_step_with_its_input_and_then_its_output() -> None:
    before: list[StepEvent] = []
    after: list[StepEvent] = []
    results = Pipeline([AddOne(), AsyncDouble()]).run(contexts(1), before_step=before.append, after_step=after.append)
    assert [(e.step, e.sample_index, e.context.x) for e in before] == [("AddOne", 0, 0), ("AsyncDouble", 0, 1)]
    assert [(e.step, e.output) for e in after] == [("AddOne", before[1].context), ("AsyncDouble", results[0].output)]
    assert all(e.error is None for e in after)


def test_after_step_hook_sees_the_error_of_a_failing_step() -> None:
    after: list[StepEvent] = []
    Pipeline([FailOn({0}, name="Check")]).run(contexts(1), after_step=[after.append])
    [event] = after
    assert (event.step, event.output) == ("Check", None)
    assert isinstance(event.error, ValueError)


def test_a_raising_hook_is_logged_and_the_samples_still_succeed(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: StepEvent) -> None:
        raise RuntimeError("hook bug")

    caplog.set_level(logging.ERROR, logger="ace.pipeline")
    results = Pipeline([AddOne(), AsyncDouble()]).run(contexts(2), before_step=broken, after_step=[broken])
    assert all(r.ok for r in results)
    assert [r.output.y for r in results] == [2, 4]
    hook_records = [r for r in caplog.records if r.name == "ace.pipeline"]
    assert len(hook_records) == 8
    assert "hook bug" in hook_records[0].exc_text
