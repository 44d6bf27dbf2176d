"""The `ace` command: inspect skillbooks, match tasks to skills, serve the skills API.

`Command`, `CommandError`, `build_parser` and `run_cli` are the command-line frame other command
lines (`ace-eval`) build on.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ace.cli._app import Command, CommandError, build_parser, run_cli
from ace.cli._request_flags import add_model_server_flags, add_request_flags, positive_int

__all__ = [
    "COMMANDS",
    "Command",
    "CommandError",
    "add_model_server_flags",
    "add_request_flags",
    "build_parser",
    "main",
    "make_parser",
    "positive_int",
    "run_cli",
]

COMMANDS: tuple[Command, ...] = (
    Command("skillbook", "inspect and maintain a skillbook (JSON file or postgresql:// URL)", "ace.cli.skillbook"),
    Command("match", "print the skills of a skillbook that apply to a task", "ace.cli.match"),
    Command(
        "serve",
        "serve the skills HTTP API (/memory/skills) and the skillbook UI (/ui) over a skillbook "
        "(file or postgresql:// URL)",
        "ace.cli.serve",
    ),
    Command(
        "learn",
        "learn a skillbook from recorded traces (JSON/JSONL, tau2 Results, OpenTelemetry spans)",
        "ace.cli.learn",
    ),
    Command("mcp", "serve a skillbook to MCP clients (tools: match_skills, read_skill, ...)", "ace.cli.mcp"),
)
"""The commands of `ace`, each registered by its module (see `ace.cli._app`)."""

DESCRIPTION = "The `ace` command: inspect skillbooks, match tasks to skills, serve the skills API."


def make_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `ace` parser; with `argv`, only the command it names is loaded (see `build_parser`)."""
    return build_parser("ace", DESCRIPTION, COMMANDS, argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `ace` command line; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    return run_cli(make_parser(args), args)
