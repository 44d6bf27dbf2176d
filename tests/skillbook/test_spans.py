"""Skillbook mutations are OpenTelemetry GenAI memory spans (`<operation> skillbook`) naming the
skill, the operation and the trace behind it; save and load are `skillbook.save` / `skillbook.load`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from logfire.testing import CaptureLogfire

from ace import tracing
from ace.skillbook import InsightSource, Skillbook


def _memory_spans(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    return [span for span in capfire.exporter.exported_spans_as_dict() if span["name"].endswith(" skillbook")]


def test_each_mutation_is_one_memory_span_with_the_skill_id_and_operation(capfire: CaptureLogfire) -> None:
    book = Skillbook()
    book.add_skill("context", "issue", ["k"], "insight")
    book.update_skill("context-00001", issue="wider")
    book.tag_skill("context-00001", -1)
    book.mark_used(["context-00001", "context-00001"])
    book.remove_skill("context-00001", "stale")
    book.activate_skill("context-00001")
    book.purge("context-00001")
    assert [
        (s["name"], s["attributes"]["ace.skillbook.operation"], s["attributes"].get("gen_ai.memory.record.id"))
        for s in _memory_spans(capfire)
    ] == [
        ("create_memory skillbook", "ADD", "context-00001"),
        ("update_memory skillbook", "UPDATE", "context-00001"),
        ("update_memory skillbook", "TAG", "context-00001"),
        ("update_memory skillbook", "MARK_USED", None),
        ("delete_memory skillbook", "REMOVE", "context-00001"),
        ("update_memory skillbook", "ACTIVATE", "context-00001"),
        ("delete_memory skillbook", "PURGE", "context-00001"),
    ]
    spans = _memory_spans(capfire)
    assert all(s["attributes"]["gen_ai.operation.name"] == s["name"].split()[0] for s in spans)
    assert spans[2]["attributes"]["ace.tag"] == "harmful"
    assert json.loads(spans[3]["attributes"]["ace.skill_ids"]) == ["context-00001"]


def test_a_mutation_names_its_source_trace_else_the_enclosing_one(capfire: CaptureLogfire) -> None:
    book = Skillbook()
    with tracing.span_attributes(**{tracing.TRACE_UID: "crm:enclosing"}):
        book.add_skill("context", "issue", ["k"], "insight", insight_source=InsightSource(trace_uid="tau2:sim-7"))
        book.tag_skill("context-00001", 1)
    add, tag = _memory_spans(capfire)
    assert add["attributes"]["ace.trace_uid"] == "tau2:sim-7"
    assert tag["attributes"]["ace.trace_uid"] == "crm:enclosing"


def test_save_and_load_emit_spans_with_the_path(capfire: CaptureLogfire, tmp_path: Path) -> None:
    book = Skillbook()
    book.add_skill("harness", "issue", ["k"])
    book.save_to_file(tmp_path / "sb.json")
    Skillbook.load_from_file(tmp_path / "sb.json")
    spans = {s["name"]: s["attributes"] for s in capfire.exporter.exported_spans_as_dict()}
    assert spans["skillbook.save"]["path"] == spans["skillbook.load"]["path"] == str(tmp_path / "sb.json")
    assert spans["skillbook.load"]["skills"] == 1


def test_failed_mutation_span_records_the_error(capfire: CaptureLogfire) -> None:
    book = Skillbook()
    try:
        book.add_skill("context", "issue", ["k"])
    except ValueError:
        pass
    (span,) = _memory_spans(capfire)
    assert span["attributes"]["logfire.level_num"] >= 17
