"""The `ace-eval` command: tau2-bench airline evaluation and the end-to-end learning run."""

from __future__ import annotations

from collections.abc import Sequence

from ace.cli._app import build_parser, run_cli

__all__ = ["main"]

COMMAND_MODULES: tuple[str, ...] = ("ace_eval.e2e.cli", "ace_eval.spans.cli", "ace_eval.tau2.cli")
"""Modules that each register one command group (see `ace.cli._app`)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `ace-eval` command line; returns the process exit code."""
    parser = build_parser("ace-eval", __doc__.splitlines()[0], COMMAND_MODULES)
    return run_cli(parser, argv)
