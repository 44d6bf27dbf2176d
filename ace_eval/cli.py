"""The `ace-eval` command: tau2-bench airline evaluation, the end-to-end learning run and the learning benchmark."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ace.cli import Command, build_parser, run_cli

__all__ = ["COMMANDS", "DESCRIPTION", "main", "make_parser"]

COMMANDS: tuple[Command, ...] = (
    Command("e2e", "learn a skillbook on tau2-bench airline with the ACE loop, then benchmark it", "ace_eval.e2e.cli"),
    Command(
        "verify",
        "check an e2e run folder (skillbook shape, embeddings, counters vs recorded injections)",
        "ace_eval.e2e.cli",
        register="register_verify",
    ),
    Command(
        "bench",
        "measure learning: arms none / learned / all / icl / oracle on the same test items, paired",
        "ace_eval.bench.cli",
    ),
    Command("spans", "question an OTLP JSON span file (ace-eval e2e --spans-file)", "ace_eval.spans.cli"),
    Command("tau2", "tau2-bench airline harness", "ace_eval.tau2.cli"),
)
"""The commands of `ace-eval`, each registered by its module (see `ace.cli.build_parser`)."""

DESCRIPTION = "The `ace-eval` command: tau2-bench airline evaluation and the end-to-end learning run."


def make_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `ace-eval` parser; with `argv`, only the command it names is loaded."""
    return build_parser("ace-eval", DESCRIPTION, COMMANDS, argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `ace-eval` command line; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    return run_cli(make_parser(args), args)
