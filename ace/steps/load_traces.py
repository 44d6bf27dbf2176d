"""`LoadTracesStep`: the foreground of learning from recorded traces - read the trace a sample points
at (a `TraceLocation`, from `trace_locations`) into the context. The files and their formats are
`ace.traces` (`ace.traces.files`); the names below them stay importable from here for one release.
"""

from __future__ import annotations

from ace.steps.context import ACEStepContext
from ace.traces.files import (
    MAX_LINE_BYTES,
    MAX_TRACE_FILE_BYTES,
    TraceFileError,
    TraceLocation,
    load_trace_file,
    trace_at,
    trace_locations,
)

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_TRACE_FILE_BYTES",
    "LoadTracesStep",
    "TraceFileError",
    "TraceLocation",
    "load_trace_file",
    "trace_locations",
]


class LoadTracesStep:
    """Read the trace at `ctx.sample` (a `TraceLocation`) into `ctx.trace`; the file name becomes
    the trace's display name unless metadata names one. A context that already carries a trace
    (an in-memory trace) passes through unchanged. Raises `TraceFileError` when the file or that
    trace in it cannot be used."""

    requires = frozenset({"sample"})
    provides = frozenset({"trace"})

    def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        location = ctx.sample
        if not isinstance(location, TraceLocation):
            if ctx.trace is None:
                raise TypeError(
                    f"LoadTracesStep needs a TraceLocation sample or a context with a trace; got "
                    f"{type(location).__name__}"
                )
            return ctx
        trace, name = trace_at(location)
        return ctx.replace(trace=trace, metadata={"display_name": name, **ctx.metadata})
