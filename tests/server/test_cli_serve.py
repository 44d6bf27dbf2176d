"""`ace serve SKILLBOOK.json [--host] [--port]`: argument handling (the app itself is tested in-process)."""

from __future__ import annotations

from ace.cli import COMMAND_MODULES, main
from ace.cli._app import build_parser


def test_serve_binds_loopback_port_8765_by_default():
    args = build_parser("ace", "", COMMAND_MODULES).parse_args(["serve", "skillbook.json"])

    assert (args.host, args.port) == ("127.0.0.1", 8765)


def test_serve_missing_file_exits_2_without_starting(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "missing.json")]) == 2
    assert "no such skillbook file" in capsys.readouterr().err


def test_serve_file_of_another_schema_exits_2_naming_the_file_and_version(tmp_path, capsys):
    path = tmp_path / "old.json"
    path.write_text('{"schema_version": "1", "skills": {}}')

    assert main(["serve", str(path)]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert "v2 required" in line and str(path) in line and "'1'" in line
