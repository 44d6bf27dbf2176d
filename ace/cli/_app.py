"""The command-line frame shared by `ace` and `ace-eval`: argparse with pluggable command groups.

A command module exposes `register(subparsers)`, which adds its sub-parser and sets
`handler=callable(args) -> int` on it. Handlers raise `CommandError` for bad input; `run_cli` turns
it into a one-line message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from ace import __version__

__all__ = ["CommandError", "build_parser", "run_cli"]


class CommandError(Exception):
    """Bad input to a command (missing file, invalid skillbook, unknown id).

    The message is shown to the user as one line; the process exits with code 2.
    """


def build_parser(prog: str, description: str, modules: Sequence[str]) -> argparse.ArgumentParser:
    """Return a parser named `prog` with the command groups of `modules` registered."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"{prog} {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in modules:
        importlib.import_module(module_name).register(subparsers)
    return parser


def run_cli(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse `argv` and run the chosen handler; returns the process exit code."""
    # Spans go nowhere unless a command configures logfire (e.g. `ace-eval e2e --logfire`); the
    # library's spans must not warn about that on every command.
    os.environ.setdefault("LOGFIRE_IGNORE_NO_CONFIG", "1")
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(args)
    except CommandError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
