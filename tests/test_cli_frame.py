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


def test_a_command_error_is_made_one_terminal_safe_line_in_one_place(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="demo")

    def fail(_: argparse.Namespace) -> int:
        raise CommandError("skill 'context-00001' of x.json:\n  issue \x1b]0;pwned\x07 is\tbad \x9b")

    parser.set_defaults(handler=fail)
    assert run_cli(parser, []) == 2
    err = capsys.readouterr().err
    assert err == "demo: error: skill 'context-00001' of x.json:   issue \\x1b]0;pwned\\x07 is bad \\x9b\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["skillbook", "show"], "the following arguments are required: path"),
        (
            [
                "learn",
                "t.json",
                "--skillbook",
                "s.json",
                "--reflector-model",
                "x",
                "--skill-manager-model",
                "x",
                "--epochs",
                "abc",
            ],
            "argument --epochs: expected a whole number of at least 1, got 'abc'",
        ),
        (["match", "sb.json", "task", "--limit", "x"], "argument --limit: invalid int value: 'x'"),
        (["nonsense"], "invalid choice: 'nonsense'"),
    ],
    ids=["missing-argument", "positive-int", "int", "unknown-command"],
)
def test_a_usage_mistake_is_one_line_pointing_to_help(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert message in err and err.rstrip().endswith("--help)") and "usage:" not in err
    assert "positive_int" not in err


def test_a_password_on_the_command_line_is_masked_in_command_errors(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="demo")

    def fail(_: argparse.Namespace) -> int:
        raise CommandError('invalid percent-encoded token: "s%zzcret"')

    parser.add_argument("skillbook")
    parser.set_defaults(handler=fail)
    assert run_cli(parser, ["postgresql://ace:s%zzcret@db/x"]) == 2
    assert capsys.readouterr().err == 'demo: error: invalid percent-encoded token: "***"\n'


def test_an_unexpected_exception_exits_1_with_a_masked_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="demo")

    def crash(_: argparse.Namespace) -> int:
        raise RuntimeError("lost postgresql://ace:s3cret@db/x")

    parser.set_defaults(handler=crash)
    assert run_cli(parser, []) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: lost postgresql://ace:***@db/x" in err and "s3cret" not in err


def test_a_run_stopped_by_a_refused_credential_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from ace.models import ModelConfigurationError

    parser = argparse.ArgumentParser(prog="demo")

    def refused(_: argparse.Namespace) -> int:
        raise ModelConfigurationError("openai/x: the provider refused the credentials (key sk-abc);\ncheck the key")

    parser.add_argument("--api-key")
    parser.set_defaults(handler=refused)
    assert run_cli(parser, ["--api-key", "sk-abc"]) == 2
    err = capsys.readouterr().err
    assert err == "demo: error: openai/x: the provider refused the credentials (key ***); check the key\n"
