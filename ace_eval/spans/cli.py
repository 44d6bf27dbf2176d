"""`ace-eval spans PATH [--skill ID | --trace UID | --summary] [--json]`: question a local span file.

Exit codes: 0 with an answer; 1 when no span mentions the skill or trace asked about; 2 when the
file is missing or is not OTLP JSON lines. Incomplete JSON lines after the first (a killed run
leaves its last line half-written) are skipped with one warning line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ace.cli import CommandError
from ace_eval.spans._index import SpanIndex
from ace_eval.spans._reader import ReadResult, SpanFileError, read_spans
from ace_eval.spans._reports import skill_report, summary_report, trace_report
from ace_eval.spans._text import format_skill, format_summary, format_trace

__all__ = ["register"]

_LINES_NAMED = 3
"""How many skipped line numbers the warning names."""


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace-eval spans`."""
    parser.description = (
        "Read a span file written by `ace-eval e2e --spans-file` and report on one skill, one trace, "
        "or the whole run (default). Exit 0: answered; 1: no span mentions the skill or trace; "
        "2: bad input."
    )
    parser.add_argument("path", type=Path, help="OTLP JSON lines file (one export request per line)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--skill", metavar="ID", help="every skillbook operation on skill ID, in time order")
    mode.add_argument("--trace", metavar="UID", help="what the learning tail did with trace UID")
    mode.add_argument("--summary", action="store_true", help="counts over the whole file (the default)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.set_defaults(handler=_spans)


def _warn_skipped(path: Path, read: ReadResult) -> None:
    if not read.skipped_lines:
        return
    named = ", ".join(str(n) for n in read.skipped_lines[:_LINES_NAMED])
    more = ", ..." if len(read.skipped_lines) > _LINES_NAMED else ""
    print(
        f"ace-eval spans: warning: {path}: skipped {len(read.skipped_lines)} incomplete JSON line(s) "
        f"(line {named}{more}); a killed run leaves its last line half-written",
        file=sys.stderr,
    )


def _spans(args: argparse.Namespace) -> int:
    try:
        read = read_spans(args.path)
    except SpanFileError as exc:
        raise CommandError(str(exc)) from exc
    _warn_skipped(args.path, read)
    index = SpanIndex(read.spans)
    if args.skill is not None:
        report, subject, text = skill_report(index, args.skill), f"skill {args.skill}", format_skill
    elif args.trace is not None:
        report, subject, text = trace_report(index, args.trace), f"trace {args.trace}", format_trace
    else:
        report, subject, text = summary_report(index, read, str(args.path)), "", format_summary
    if report is None:
        print(json.dumps({"error": f"no span mentions {subject}"}) if args.json else f"no span mentions {subject}")
        return 1
    try:
        print(json.dumps(report, indent=2) if args.json else text(report))
    except BrokenPipeError:
        # `ace-eval spans big.jsonl --skill s-1 | head`: the reader left; no traceback at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
