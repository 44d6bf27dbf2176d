"""The README's command table parses with the real `ace` / `ace-eval` parsers, so it cannot drift."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from ace.cli import make_parser as ace_parser
from ace_eval.cli import make_parser as ace_eval_parser

README = Path(__file__).resolve().parents[1] / "README.md"
_ROW = re.compile(r"^\| `((?:ace|ace-eval) [^`]*)` \|", re.MULTILINE)
_PARSERS = {"ace": ace_parser, "ace-eval": ace_eval_parser}


def _table_commands() -> list[str]:
    return _ROW.findall(README.read_text(encoding="utf-8"))


def test_the_table_lists_every_command_of_both_clis() -> None:
    from ace.cli import COMMANDS as ACE_COMMANDS
    from ace_eval.cli import COMMANDS as ACE_EVAL_COMMANDS

    named = {tuple(shlex.split(command)[:2]) for command in _table_commands()}
    expected = {("ace", c.name) for c in ACE_COMMANDS} | {("ace-eval", c.name) for c in ACE_EVAL_COMMANDS}
    assert expected <= named


@pytest.mark.parametrize("command", _table_commands())
def test_every_command_row_parses_with_the_real_parser(command: str) -> None:
    program, *argv = shlex.split(command)
    parser = _PARSERS[program]()
    parser.error = _raise  # type: ignore[method-assign]
    for action in parser._actions:  # sub-parsers report errors through their own `error`
        if isinstance(action, argparse._SubParsersAction):
            _patch_errors(action)
    args = parser.parse_args(argv)
    assert callable(getattr(args, "handler", None)), f"{command!r} names a command group, not a command"


def _patch_errors(subparsers: argparse._SubParsersAction) -> None:
    for sub in subparsers.choices.values():
        sub.error = _raise  # type: ignore[method-assign]
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                _patch_errors(action)


def _raise(message: str) -> None:
    raise AssertionError(message)
