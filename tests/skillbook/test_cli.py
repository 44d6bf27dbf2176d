"""`ace skillbook ...` over a skillbook file."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import pytest

from ace.cli import main
from ace.skillbook import InsightSource, Skillbook


@pytest.fixture
def book_path(tmp_path: Path, skillbook: Skillbook, source: InsightSource) -> Path:
    """The conftest skillbook plus an inactive context skill, saved to `sb.json`."""
    skillbook.tag_skill("context-00001", 1, insight_source=source)
    skillbook.add_skill("context", "Old refund rule.", ["refund"], "Refund everything.")
    skillbook.remove_skill("context-00002", "wrong")
    path = tmp_path / "sb.json"
    skillbook.save_to_file(path)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["skillbook", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_show_lists_active_skills(capsys, book_path: Path) -> None:
    code, out, _ = _run(capsys, "show", str(book_path))
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("- [")] == ["- [context-00001]", "- [harness-00001]"]


def test_show_all_includes_inactive_skills_marked(capsys, book_path: Path) -> None:
    _, out, _ = _run(capsys, "show", str(book_path), "--all")
    assert "- [context-00002] (inactive)" in out.splitlines()


def test_show_section_filters(capsys, book_path: Path) -> None:
    _, out, _ = _run(capsys, "show", str(book_path), "--section", "harness")
    assert [line for line in out.splitlines() if line.startswith("- [")] == ["- [harness-00001]"]


def test_stats_prints_counts_as_json(capsys, book_path: Path) -> None:
    _, out, _ = _run(capsys, "stats", str(book_path))
    report = json.loads(out)
    # occurrences: three API adds, one TAG from a trace, one API remove
    assert (report["skills"], report["active_skills"], report["sources"]["total_sources"]) == (3, 2, 5)


def test_sources_prints_the_occurrences_of_one_skill(capsys, book_path: Path) -> None:
    _, out, _ = _run(capsys, "sources", str(book_path), "context-00001")
    assert [(o["trace_uid"], o["operation_type"]) for o in json.loads(out)] == [
        (f"api:{getpass.getuser()}", "ADD"),
        ("tau2-airline:task-7", "TAG"),
    ]


def test_export_md_writes_every_skill(capsys, book_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "sb.md"
    code, _, _ = _run(capsys, "export-md", str(book_path), "-o", str(target))
    text = target.read_text()
    assert code == 0
    assert "### context-00001" in text and "### context-00002 (inactive)" in text and "### harness-00001" in text


def test_export_md_writes_utf8_into_a_new_folder_leaving_no_temp_file(capsys, book_path: Path, tmp_path: Path) -> None:
    book = Skillbook.load_from_file(book_path)
    book.add_skill("harness", "Flüge nach Zürich: Umlaute im Ticket", ["umlaut"])
    book.save_to_file(book_path)
    target = tmp_path / "exports" / "sb.md"

    code, _, _ = _run(capsys, "export-md", str(book_path), "-o", str(target))

    assert code == 0
    assert "Flüge nach Zürich" in target.read_bytes().decode("utf-8")
    assert [p.name for p in target.parent.iterdir()] == ["sb.md"]


def test_purge_with_yes_deletes_the_skill_from_the_file(capsys, book_path: Path) -> None:
    code, _, _ = _run(capsys, "purge", str(book_path), "context-00002", "--yes")
    assert code == 0
    assert Skillbook.load_from_file(book_path).get_skill("context-00002") is None


def test_purge_without_yes_refuses_and_keeps_the_skill(capsys, book_path: Path) -> None:
    code, _, err = _run(capsys, "purge", str(book_path), "context-00002")
    assert (code, err.count("\n")) == (2, 1) and "--yes" in err
    assert Skillbook.load_from_file(book_path).get_skill("context-00002") is not None


def test_activate_re_activates_an_inactive_skill_in_the_file(capsys, book_path: Path) -> None:
    code, out, _ = _run(capsys, "activate", str(book_path), "context-00002", "--reason", "rule is back")
    assert code == 0 and "activated context-00002" in out
    skill = Skillbook.load_from_file(book_path).get_skill("context-00002")
    assert skill.active and [o.operation_type for o in skill.occurrences] == ["ADD", "REMOVE", "UPDATE"]
    last = skill.occurrences[-1]
    assert (last.source_system, last.trace_id, last.learning_text) == (
        "cli",
        getpass.getuser(),
        "re-activated: rule is back",
    )


def test_remove_soft_removes_with_the_reason_and_cli_origin(capsys, book_path: Path) -> None:
    code, out, _ = _run(capsys, "remove", str(book_path), "context-00001", "--reason", "wrong airline")
    assert code == 0 and "removed context-00001" in out
    skill = Skillbook.load_from_file(book_path).get_skill("context-00001")
    last = skill.occurrences[-1]
    assert not skill.active
    assert (last.operation_type, last.source_system, last.trace_id, last.learning_text) == (
        "REMOVE",
        "cli",
        getpass.getuser(),
        "wrong airline",
    )


def test_remove_then_activate_restores_the_skill_with_both_records(capsys, book_path: Path) -> None:
    _run(capsys, "remove", str(book_path), "context-00001", "--reason", "doubt")
    code, _, _ = _run(capsys, "activate", str(book_path), "context-00001")
    skill = Skillbook.load_from_file(book_path).get_skill("context-00001")
    assert code == 0 and skill.active
    assert [(o.operation_type, o.source_system) for o in skill.occurrences[-2:]] == [
        ("REMOVE", "cli"),
        ("UPDATE", "cli"),
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["context-00002", "--reason", "x"], "already inactive"),
        (["context-00042", "--reason", "x"], "no skill with id 'context-00042'"),
        (["context-00001", "--reason", "  "], "--reason must not be empty"),
    ],
)
def test_remove_refusals_are_one_line_errors_that_leave_the_file_alone(
    capsys, book_path: Path, argv: list[str], message: str
) -> None:
    before = book_path.read_bytes()
    code, _, err = _run(capsys, "remove", str(book_path), *argv)
    assert (code, err.count("\n")) == (2, 1) and message in err
    assert book_path.read_bytes() == before


def test_activate_an_active_skill_is_a_one_line_error_and_leaves_the_file_alone(capsys, book_path: Path) -> None:
    before = book_path.read_bytes()
    code, _, err = _run(capsys, "activate", str(book_path), "context-00001")
    assert (code, err.count("\n")) == (2, 1) and "already active" in err
    assert book_path.read_bytes() == before


@pytest.mark.parametrize(
    "command",
    [
        ["sources", "{path}", "context-00042"],
        ["purge", "{path}", "context-00042", "--yes"],
        ["activate", "{path}", "context-00042"],
    ],
)
def test_unknown_skill_id_is_a_one_line_error(capsys, book_path: Path, command: list[str]) -> None:
    code, _, err = _run(capsys, *[part.format(path=book_path) for part in command])
    assert code == 2 and err.count("\n") == 1 and "context-00042" in err


@pytest.mark.parametrize("command", ["show", "stats", "export-md"])
def test_missing_file_is_a_one_line_error(capsys, tmp_path: Path, command: str) -> None:
    extra = ["-o", str(tmp_path / "x.md")] if command == "export-md" else []
    code, _, err = _run(capsys, command, str(tmp_path / "absent.json"), *extra)
    assert code == 2 and err.count("\n") == 1 and "absent.json" in err


@pytest.mark.parametrize(
    "content, message",
    [('{"schema_version": "1", "skills": {}}', "Skillbook format v2 required"), ("{not json", "not valid JSON")],
)
def test_invalid_file_is_a_one_line_error(capsys, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, _, err = _run(capsys, "show", str(path))
    assert code == 2 and err.count("\n") == 1 and message in err
