"""Skillbook operations emit Logfire spans named `skillbook.<operation>` with the skill id."""

from __future__ import annotations

from pathlib import Path

from logfire.testing import CaptureLogfire

from ace.skillbook import Skillbook


def _spans(capfire: CaptureLogfire) -> list[tuple[str, str | None]]:
    return [
        (span["name"], span["attributes"].get("skill_id"))
        for span in capfire.exporter.exported_spans_as_dict()
        if span["name"].startswith("skillbook.")
    ]


def test_mutations_emit_one_span_each_with_the_skill_id(capfire: CaptureLogfire) -> None:
    book = Skillbook()
    book.add_skill("context", "issue", ["k"], "insight")
    book.update_skill("context-00001", issue="wider")
    book.tag_skill("context-00001", 1)
    book.remove_skill("context-00001", "stale")
    book.purge("context-00001")
    assert _spans(capfire) == [
        ("skillbook.add_skill", "context-00001"),
        ("skillbook.update_skill", "context-00001"),
        ("skillbook.tag_skill", "context-00001"),
        ("skillbook.remove_skill", "context-00001"),
        ("skillbook.purge", "context-00001"),
    ]


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
    (span,) = [s for s in capfire.exporter.exported_spans_as_dict() if s["name"] == "skillbook.add_skill"]
    assert span["attributes"]["logfire.level_num"] >= 17
