"""The spans of an ACE loop say which sample, epoch and trace they serve (capfire)."""

from __future__ import annotations

from typing import Any

from logfire.testing import CaptureLogfire
from test_ace_loop import CountingEnvironment

from ace.runners import ACE
from ace.steps import Sample

QUESTIONS = ("capital of France?", "boiling point of water?")


def test_every_step_span_and_session_span_carries_trace_uid_sample_id_and_epoch(
    roles: dict[str, Any], capfire: CaptureLogfire
) -> None:
    samples = [Sample(question=q, ground_truth="42", id=f"q{i}") for i, q in enumerate(QUESTIONS)]
    ACE.from_roles(**roles, environment=CountingEnvironment()).run(samples, epochs=2)

    spans = capfire.exporter.exported_spans_as_dict()
    steps = [s for s in spans if s["name"].startswith("pipeline.step ")]
    per_step = {}
    for s in steps:
        attributes = s["attributes"]
        assert s["name"] == f"pipeline.step {attributes['ace.step']}"
        per_step.setdefault(attributes["ace.step"], []).append((attributes["ace.epoch"], attributes["ace.sample_id"]))
    expected = sorted((epoch, f"q{i}") for epoch in (1, 2) for i in range(len(QUESTIONS)))
    for step in ("AgentStep", "EvaluateStep", "ReflectStep", "UpdateStep"):
        assert sorted(per_step[step]) == expected, step
    for s in steps:
        if s["attributes"]["ace.step"] in ("ReflectStep", "UpdateStep"):
            assert s["attributes"]["ace.trace_uid"] == f"ace:{s['attributes']['ace.sample_id']}"
    sessions = [s for s in spans if s["name"] == "sm.session"]
    assert sorted((s["attributes"]["ace.epoch"], s["attributes"]["ace.trace_uid"]) for s in sessions) == [
        (epoch, f"ace:q{i}") for epoch in (1, 2) for i in range(len(QUESTIONS))
    ]
    agents = {s["attributes"].get("gen_ai.agent.name") for s in spans if s["name"].startswith("invoke_agent ")}
    assert "sm" in agents
