"""The `ace` command: inspect skillbooks, match tasks to skills, serve the skills API."""

from __future__ import annotations

from collections.abc import Sequence

from ace.cli._app import CommandError, build_parser, run_cli

__all__ = ["main", "CommandError"]

COMMAND_MODULES: tuple[str, ...] = ("ace.cli.skillbook", "ace.cli.match", "ace.cli.serve")
"""Modules that each register one command group (see `ace.cli._app`)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `ace` command line; returns the process exit code."""
    parser = build_parser("ace", __doc__.splitlines()[0], COMMAND_MODULES)
    return run_cli(parser, argv)
