"""Question an OTLP JSON lines span file written by `ace-eval e2e --spans-file` (`ace-eval spans`).

`read_spans` streams the file into compact `Span` records; `SpanIndex` links them to their parents
and children; `skill_report`, `trace_report` and `summary_report` answer the command's three
questions as JSON-ready dicts.
"""

from __future__ import annotations

from ace_eval.spans._index import SpanIndex
from ace_eval.spans._reader import ReadResult, Span, SpanFileError, read_spans
from ace_eval.spans._reports import skill_report, summary_report, trace_report

__all__ = [
    "ReadResult",
    "Span",
    "SpanFileError",
    "SpanIndex",
    "read_spans",
    "skill_report",
    "summary_report",
    "trace_report",
]
