"""The command-line frame shared by `ace` and `ace-eval`: argparse with lazily loaded command groups.

A CLI lists its commands as `Command(name, help, module)`: the one place a command's help is
written. `build_parser` adds each command's sub-parser with that help and, for the command the
arguments name, imports its module and calls `register(parser)` (or the function `Command.register`
names), which adds the arguments and sets `handler=callable(args) -> int`. So `--help` and every
command start without loading the others (nor the LLM clients they import). Handlers raise
`CommandError` for bad input; `run_cli` turns it, and an `OSError` (a file the system refused to read
or write), into a one-line message on stderr and exit code 2, never a traceback. A usage mistake (unknown
flag, bad value) is one line too, with a pointer to
`--help`. Every error line goes through `ace.redaction`, with the secrets of the connection strings
on the command line, so a password given in a `postgresql://` argument is never echoed back.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from ace import __version__
from ace.errors import AceError
from ace.redaction import redact, url_secrets

__all__ = ["Command", "CommandError", "build_parser", "run_cli"]


class CommandError(AceError):
    """Bad input to a command (missing file, invalid skillbook, unknown id).

    The message is shown to the user as one line; the process exits with code 2.
    """


@dataclass(frozen=True)
class Command:
    """One command of a command line, known without importing its module."""

    name: str
    """What the user types, e.g. `match`."""
    help: str
    """The one-line help: listed by `PROG --help`, and the description of `PROG NAME --help` unless
    the command's register function sets a longer one."""
    module: str
    """The module that defines the command's arguments and handler."""
    register: str = "register"
    """The function of `module` that fills the command's parser: `register(parser)`."""


def build_parser(
    prog: str, description: str, commands: Sequence[Command], argv: Sequence[str] | None = None
) -> argparse.ArgumentParser:
    """Return a parser named `prog` with `commands` as its sub-commands.

    With `argv`, only the module of the command `argv` names is imported; the other commands are
    listed with their help but take no arguments until chosen. With `argv=None` every module is
    imported (a complete parser, e.g. to check documentation against it).
    """
    parser = _ArgumentParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"{prog} {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = None if argv is None else next((arg for arg in argv if not arg.startswith("-")), None)
    for command in commands:
        command_parser = subparsers.add_parser(command.name, help=command.help, description=command.help)
        if argv is None or command.name == chosen:
            getattr(importlib.import_module(command.module), command.register)(command_parser)
    return parser


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors as one line naming where to look, secrets masked."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {redact(message, _secrets(sys.argv))} (see {self.prog} --help)\n")


_SECRET_FLAGS = ("--api-key",)
"""Flags whose value is a secret, masked like a URL's password in every error line."""


def _secrets(argv: Sequence[str]) -> tuple[str, ...]:
    found = [secret for arg in argv for secret in url_secrets(arg)]
    for index, arg in enumerate(argv):
        for flag in _SECRET_FLAGS:
            if arg == flag and index + 1 < len(argv):
                found.append(argv[index + 1])
            elif arg.startswith(f"{flag}="):
                found.append(arg.partition("=")[2])
    return tuple(secret for secret in found if secret)


def _one_line(text: str) -> str:
    """A `CommandError`'s message as one terminal-safe line: line breaks and tabs become spaces,
    other control characters (C0, DEL, C1: a skillbook or a file name may hold any) `\\x1b`-style
    escapes. The one place command errors are made safe to print; raise sites pass plain text."""
    flat = re.sub(r"[\r\n\t]+", " ", text)
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda match: f"\\x{ord(match.group()):02x}", flat)


def _printable(text: str) -> str:
    """`text` on one line, control characters written as escapes (a file name may hold any)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def run_cli(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse `argv` and run the chosen handler; returns the process exit code (2 for a usage
    mistake, a `CommandError`, an `OSError` - one line naming the file - or a
    `ModelConfigurationError` raised by a run whose every sample failed on a credential; 1 with a
    masked traceback for an unexpected exception)."""
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    secrets = _secrets(sys.argv[1:] if argv is None else argv)
    try:
        return int(handler(args))
    except CommandError as exc:
        print(f"{parser.prog}: error: {redact(_one_line(str(exc)), secrets)}", file=sys.stderr)
        return 2
    except OSError as exc:  # the file system refused (permissions, a planted link, a FIFO): one line too
        where = f"{exc.filename}: " if exc.filename else ""
        message = _printable(f"{where}{exc.strerror or exc}")
        print(f"{parser.prog}: error: {redact(message, secrets)}", file=sys.stderr)
        return 2
    except Exception as exc:
        from ace.models import ModelConfigurationError

        if isinstance(exc, ModelConfigurationError):  # a credential to fix before anything can run: bad input
            print(f"{parser.prog}: error: {redact(_one_line(str(exc)), secrets)}", file=sys.stderr)
            return 2
        print(redact(traceback.format_exc(), secrets), file=sys.stderr, end="")
        return 1
