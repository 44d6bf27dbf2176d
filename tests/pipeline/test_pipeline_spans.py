"""Each step execution runs inside a `pipeline.step <StepName>` span."""

from __future__ import annotations

import logfire
from logfire.testing import CaptureLogfire
from pipeline_helpers import AddOne, FailOn, contexts

from ace.pipeline import Pipeline, StepContext


def test_each_step_execution_gets_a_span_named_for_the_step(capfire: CaptureLogfire) -> None:
    Pipeline([AddOne(), FailOn({1}, name="Check")]).run(contexts(2))
    spans = [s for s in capfire.exporter.exported_spans_as_dict() if s["name"].startswith("pipeline.step ")]
    steps = sorted((s["name"], s["attributes"]["ace.step"], s["attributes"]["ace.sample_index"]) for s in spans)
    assert steps == [
        ("pipeline.step AddOne", "AddOne", 0),
        ("pipeline.step AddOne", "AddOne", 1),
        ("pipeline.step Check", "Check", 0),
        ("pipeline.step Check", "Check", 1),
    ]
    failed = [s for s in spans if s["attributes"]["ace.step"] == "Check" and s["attributes"]["ace.sample_index"] == 1]
    assert failed[0]["attributes"]["logfire.level_num"] >= 17  # error level: the exception was recorded


def test_spans_opened_inside_a_sync_step_nest_under_the_step_span(capfire: CaptureLogfire) -> None:
    class Traced:
        requires = frozenset()
        provides = frozenset()

        def __call__(self, ctx: StepContext) -> StepContext:
            with logfire.span("inside"):
                return ctx

    Pipeline([Traced()]).run(contexts(1))
    spans = {s["name"]: s for s in capfire.exporter.exported_spans_as_dict()}
    assert spans["inside"]["parent"]["span_id"] == spans["pipeline.step Traced"]["context"]["span_id"]
