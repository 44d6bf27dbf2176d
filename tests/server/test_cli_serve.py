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
