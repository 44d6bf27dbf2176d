"""The command-line frame: version, help, and bad input as a one-line error with exit code 2."""

from __future__ import annotations

import argparse

import pytest

from ace.cli import CommandError, main
from ace.cli._app import run_cli


def test_version_flag_prints_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("ace ")


def test_command_error_becomes_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="demo")

    def fail(_: argparse.Namespace) -> int:
        raise CommandError("skillbook.json: no such file")

    parser.set_defaults(handler=fail)
    assert run_cli(parser, []) == 2
    err = capsys.readouterr().err
    assert err == "demo: error: skillbook.json: no such file\n"
