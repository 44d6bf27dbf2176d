"""`ace serve SKILLBOOK.json [--host] [--port]`: argument handling (the app itself is tested in-process)."""

from __future__ import annotations

import pytest

from ace.cli import main, make_parser


def test_serve_binds_loopback_port_8765_by_default():
    args = make_parser().parse_args(["serve", "skillbook.json"])

    assert (args.host, args.port) == ("127.0.0.1", 8765)


def test_serve_keeps_the_librarys_default_task_cache_in_one_process_without_pooling_it():
    from ace.retrieval.task_vector_cache import DEFAULT_CACHE_ENTRIES

    args = make_parser().parse_args(["serve", "skillbook.json"])

    assert (args.task_cache, args.no_batching, args.workers) == (DEFAULT_CACHE_ENTRIES, False, 1)


def test_serve_missing_file_exits_2_without_starting(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "missing.json")]) == 2
    assert "no such skillbook file" in capsys.readouterr().err


def test_serve_file_of_another_schema_exits_2_naming_the_file_and_version(tmp_path, capsys):
    path = tmp_path / "old.json"
    path.write_text('{"schema_version": "1", "skills": {}}')

    assert main(["serve", str(path)]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert "v2 required" in line and str(path) in line and "'1'" in line


@pytest.mark.parametrize(
    "content",
    [
        '{"schema_version": "2", "skills": {',
        '{"schema_version": "2", "skills": []}',
        "[]",
        '{"schema_version": "2", "skills": {"context-00001": {"id": "context-00001"}}}',
    ],
    ids=["truncated", "skills-not-an-object", "not-an-object", "skill-missing-fields"],
)
def test_serve_malformed_file_exits_2_with_one_line_on_stderr(tmp_path, capsys, content):
    path = tmp_path / "bad.json"
    path.write_text(content)

    assert main(["serve", str(path)]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("ace: error: ") and str(path) in line and len(line) < 500
