"""Traces: what an agent run leaves behind and ace learns from, in one package.

- `Sample` (`sample`): one task for the agent, as the loop hands it to an agent and an environment;
- files and formats (`files`): our JSON / JSONL traces, tau2 `Results` files (one trace per
  simulation), OpenTelemetry GenAI span files (OTLP JSON lines, one trace per root agent run,
  `_otel`), read as untrusted input: `trace_locations`, `trace_at`, `load_trace_file`;
- identity (`identity`): the `trace_uid` provenance records name a trace by;
- fields (`fields`): the question, feedback, ground truth and reward of a trace of any shape;
- rendering (`rendering`): a trace as the text a Reflector reads, within a character budget.

The steps of the loop compose these (`ace.steps.LoadTracesStep`, `ReflectStep`, `UpdateStep`);
a new trace format is a reader in `files` (docs/architecture.md). The names below are imported on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.traces.fields import trace_feedback, trace_ground_truth, trace_question, trace_reward
    from ace.traces.files import (
        MAX_LINE_BYTES,
        MAX_TRACE_FILE_BYTES,
        TraceFileError,
        TraceLocation,
        load_trace_file,
        trace_at,
        trace_locations,
    )
    from ace.traces.identity import TraceIdentity, infer_trace_identity
    from ace.traces.rendering import DEFAULT_TRACE_CHAR_LIMIT, render_trace, to_plain_data, truncate_middle
    from ace.traces.sample import Sample

__all__ = [
    "DEFAULT_TRACE_CHAR_LIMIT",
    "MAX_LINE_BYTES",
    "MAX_TRACE_FILE_BYTES",
    "Sample",
    "TraceFileError",
    "TraceIdentity",
    "TraceLocation",
    "infer_trace_identity",
    "load_trace_file",
    "render_trace",
    "to_plain_data",
    "trace_at",
    "trace_feedback",
    "trace_ground_truth",
    "trace_locations",
    "trace_question",
    "trace_reward",
    "truncate_middle",
]

_EXPORTS: dict[str, str] = {
    "DEFAULT_TRACE_CHAR_LIMIT": "ace.traces.rendering",
    "MAX_LINE_BYTES": "ace.traces.files",
    "MAX_TRACE_FILE_BYTES": "ace.traces.files",
    "Sample": "ace.traces.sample",
    "TraceFileError": "ace.traces.files",
    "TraceIdentity": "ace.traces.identity",
    "TraceLocation": "ace.traces.files",
    "infer_trace_identity": "ace.traces.identity",
    "load_trace_file": "ace.traces.files",
    "render_trace": "ace.traces.rendering",
    "to_plain_data": "ace.traces.rendering",
    "trace_at": "ace.traces.files",
    "trace_feedback": "ace.traces.fields",
    "trace_ground_truth": "ace.traces.fields",
    "trace_locations": "ace.traces.files",
    "trace_question": "ace.traces.fields",
    "trace_reward": "ace.traces.fields",
    "truncate_middle": "ace.traces.rendering",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
