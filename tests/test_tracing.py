"""ace.tracing: quiet until the application configures logfire or OpenTelemetry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from logfire.testing import CaptureLogfire

from ace import tracing


def _run_outside_the_repo(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("LOGFIRE_", "OTEL_"))}
    return subprocess.run(
        [sys.executable, "-W", "default", "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_library_prints_no_warning_in_a_fresh_interpreter_outside_the_repo(tmp_path: Path) -> None:
    result = _run_outside_the_repo(
        """
        from ace.skillbook import Skillbook
        from ace.pipeline import Pipeline, StepContext

        class Noop:
            requires = provides = frozenset()
            def __call__(self, ctx):
                return ctx

        skillbook = Skillbook()
        skill = skillbook.add_skill("context", "Refunds need the booking id", ["refund"], "Ask for it first.")
        skillbook.tag_skill(skill.id, 1)
        Pipeline([Noop()]).run([StepContext(sample=1)])
        print("done")
    """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("done\n", "")


def test_an_application_that_configured_only_opentelemetry_receives_the_spans(tmp_path: Path) -> None:
    result = _run_outside_the_repo(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)

        from ace.pipeline import Pipeline, StepContext

        class Noop:
            requires = provides = frozenset()
            def __call__(self, ctx):
                return ctx

        Pipeline([Noop()]).run([StepContext(sample=1)])
        for span in exporter.get_finished_spans():
            print(span.name, dict(span.attributes))
    """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "pipeline.step Noop {'ace.step': 'Noop', 'ace.sample_index': 0}" in result.stdout.splitlines()
    assert result.stderr == ""


def test_span_attributes_reach_every_span_opened_inside_and_inner_values_win(capfire: CaptureLogfire) -> None:
    with tracing.span_attributes(**{tracing.TRACE_UID: "crm:1", tracing.EPOCH: 1}):
        with tracing.span_attributes(**{tracing.EPOCH: 2}), tracing.span("inner", extra=[1, 2]):
            pass
    with tracing.span("outside"):
        pass
    spans = {s["name"]: s["attributes"] for s in capfire.exporter.exported_spans_as_dict()}
    assert (spans["inner"]["ace.trace_uid"], spans["inner"]["ace.epoch"]) == ("crm:1", 2)
    assert "ace.trace_uid" not in spans["outside"]


def test_no_spans_silences_the_library_inside_the_block_only(capfire: CaptureLogfire) -> None:
    from ace.skillbook import Skillbook

    with tracing.no_spans(), tracing.span("scratch") as scratch:
        scratch.set_attributes({"ignored": 1})
        Skillbook().add_skill("context", "A probe's issue", ["probe"], "A probe's insight.")
    with tracing.span("after"):
        pass

    assert [s["name"] for s in capfire.exporter.exported_spans_as_dict()] == ["after"]
