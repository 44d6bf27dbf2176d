"""Loading recorded traces from files: JSON, JSONL, tau2 `Results` files and OTLP JSON span files.

`trace_locations(paths)` lists one `TraceLocation` per trace in the files (a tau2 Results file holds
one per simulation; a JSONL file one per non-blank line; a JSON list one per item; any other JSON
value is one trace; an OTLP JSON span file - a `.jsonl` / `.json` file of ExportTraceServiceRequest lines
as OpenTelemetry's `FileSpanExporter` writes, or one such document, recognised by `resourceSpans` -
one per root agent run, see `ace.traces._otel`). `trace_at(location)` reads one trace
(`ace.steps.LoadTracesStep` does, for the sample that points at it).

Trace files come from outside and are untrusted: every defect becomes a `TraceFileError` that names
the file (and the line of a JSONL file, the simulation of a Results file) - never an empty trace,
never another exception. A file that cannot be used at all fails the one sample it gets; a bad
JSONL line or a bad simulation fails only its own sample, the file's other traces load (a bad line of
a span file is one failed sample; the runs of the other lines load). Limits:
`MAX_TRACE_FILE_BYTES` per file, a regular file only (a FIFO, device or socket is refused before it
is opened), and `ace.untrusted`'s JSON limits (nesting depth 64, integers of at most 4,300 digits, no
duplicate keys, NaN, Infinity or lone surrogates, and a parsed form of at most `MAX_JSON_EXPANSION`
times the file's size: a file of tiny values is refused before it is parsed, `MAX_LINE_BYTES` per
line of a JSONL file counted in). JSONL lines end at `\\n` only (`\\r\\n` too); U+2028, U+2029 and
U+0085 are characters inside a line.
"""

from __future__ import annotations

import copy
import dataclasses
import stat
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ace.errors import AceError
from ace.traces._otel import OtlpSpan, is_otlp_document, otlp_spans, otlp_traces, run_label
from ace.traces._tau2 import results_traces
from ace.untrusted import (
    MAX_JSON_EXPANSION,
    UntrustedInputError,
    check_json_memory,
    open_regular_file,
    parse_json,
    quote,
)

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_TRACE_FILE_BYTES",
    "TraceFileError",
    "TraceLocation",
    "load_trace_file",
    "trace_at",
    "trace_locations",
]

MAX_TRACE_FILE_BYTES = 100 * 2**20
"""Largest trace file read (100 MiB; a 50-simulation tau2 Results file is about 3 MiB)."""

MAX_LINE_BYTES = 600
"""Memory a JSONL line may cost beyond its parsed value (its slot, an error message when it is bad,
its location), counted per line in the memory bound: a file of 50 million bad lines is refused."""

_SUFFIXES = frozenset({".json", ".jsonl"})


class TraceFileError(AceError, ValueError):
    """A trace file (or one trace in it) cannot be used: missing, unreadable, too large, not valid
    JSON / JSONL, or not the shape of a trace file (e.g. a tau2 Results file whose `simulations`
    is not a list of simulation objects). The message names the file, the line or simulation, and
    the problem; the fix is to repair or leave out that file."""


@dataclasses.dataclass(frozen=True)
class TraceLocation:
    """Where one trace lives: a file, and its position in the file's list of traces."""

    path: Path
    """The file holding the trace."""
    index: int = 0
    """Position of the trace among the file's traces."""


@dataclasses.dataclass(frozen=True)
class _Unusable:
    """A trace slot of a file whose content cannot be used (a bad JSONL line or simulation)."""

    reason: str


def load_trace_file(path: str | Path) -> list[Any]:
    """Every trace in `path`, in file order. Raises `TraceFileError` when the file is missing,
    unreadable, malformed (any line or simulation), or holds no trace. A tau2 Results file gives
    `{"task", "simulation"}` dicts, each simulation paired with its task. The traces are the
    caller's own copies."""
    traces = _cached_traces(path)
    for trace in traces:
        if isinstance(trace, _Unusable):
            raise TraceFileError(trace.reason)
    return copy.deepcopy(list(traces))


def trace_locations(paths: Iterable[str | Path]) -> list[TraceLocation]:
    """One location per trace in `paths` (files, or folders searched for *.json / *.jsonl).

    A file that cannot be read, and a folder without trace files, still get one location, so the
    sample fails with the reason instead of vanishing from the run. A bad line or simulation keeps
    its own location (its sample fails; the others load).
    """
    locations: list[TraceLocation] = []
    for path in map(Path, paths):
        files = [path]
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file()) or [path]
        for file in files:
            try:
                count = len(_cached_traces(file))
            except TraceFileError:
                count = 1
            locations.extend(TraceLocation(file, index) for index in range(count))
    return locations


def trace_at(location: TraceLocation) -> tuple[Any, str]:
    """The trace at `location` (the caller's own copy) and the name to show it by: the file's name,
    with the run's label for a span file. Raises `TraceFileError` when the file or that trace in it
    cannot be used."""
    traces = _cached_traces(location.path)
    if not 0 <= location.index < len(traces):
        raise TraceFileError(f"{location.path} holds {len(traces)} trace(s); index {location.index} does not exist")
    trace = traces[location.index]
    if isinstance(trace, _Unusable):
        raise TraceFileError(trace.reason)
    label = run_label(trace)
    # A copy: the parsed file is cached and shared by every sample that reads from it.
    return copy.deepcopy(trace), f"{location.path.name}: {label}" if label else location.path.name


def _cached_traces(path: str | Path) -> tuple[Any, ...]:
    return _load(Path(path), _stamp(Path(path)))


def _stamp(path: Path) -> tuple[int, int]:
    try:
        status = path.stat()
    except OSError as exc:
        raise TraceFileError(f"cannot read trace file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:  # e.g. a NUL byte in the path
        raise TraceFileError(f"cannot read trace file {quote(str(path))}: {exc}") from exc
    if stat.S_ISDIR(status.st_mode):
        raise TraceFileError(f"trace folder {path} holds no .json or .jsonl file")
    if not stat.S_ISREG(status.st_mode):
        raise TraceFileError(f"trace file {path} is not a regular file; give a .json or .jsonl file")
    if status.st_size > MAX_TRACE_FILE_BYTES:
        raise TraceFileError(
            f"trace file {path} is {status.st_size:,} bytes, over the {MAX_TRACE_FILE_BYTES:,}-byte limit; "
            "split it into smaller files"
        )
    return status.st_mtime_ns, status.st_size


@lru_cache(maxsize=8)
def _load(path: Path, stamp: tuple[int, int]) -> tuple[Any, ...]:
    """Parse `path` once per (mtime, size): a Results file with 50 simulations is read once."""
    try:
        with open_regular_file(path) as file:
            data = file.read(MAX_TRACE_FILE_BYTES + 1)
    except OSError as exc:
        raise TraceFileError(f"cannot read trace file {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_TRACE_FILE_BYTES:  # it grew after stat
        raise TraceFileError(f"trace file {path} is over the {MAX_TRACE_FILE_BYTES:,}-byte limit; split it")
    if path.suffix == ".jsonl":
        traces = _parse_jsonl(path, data)
    else:
        try:
            document = _parse(data, f"trace file {path}")
        except TraceFileError:
            if not _starts_with_otlp_line(data):
                raise
            traces = _parse_jsonl(path, data)  # FileSpanExporter lines in a file named .json
        else:
            traces = _split(path, document)
    if not traces:
        raise TraceFileError(f"trace file {path} holds no trace; give a file with at least one")
    return tuple(traces)


def _parse(data: bytes, what: str, *, checked: bool = False) -> Any:
    """`data` parsed; `checked` when the memory bound was checked on the whole file already."""
    try:
        return parse_json(data, what, max_expansion=None if checked else MAX_JSON_EXPANSION)
    except UntrustedInputError as exc:
        raise TraceFileError(str(exc)) from None


def _parse_jsonl(path: Path, data: bytes) -> list[Any]:
    """One trace per non-blank line; lines end at b"\\n" only, so U+2028 & co. stay inside a line.
    A file with an OTLP line (`resourceSpans`) is a span file: one trace per root agent run."""
    try:  # the bound holds for the file as a whole: each line alone may be small
        check_json_memory(data, f"trace file {path}", extra=MAX_LINE_BYTES * (data.count(b"\n") + 1))
    except UntrustedInputError as exc:
        raise TraceFileError(str(exc)) from None
    lines: list[tuple[int, Any]] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.removesuffix(b"\r")
        if not line.strip():
            continue
        try:
            lines.append((number, _parse(line, f"trace file {path} line {number}", checked=True)))
        except TraceFileError as exc:
            lines.append((number, _Unusable(str(exc))))
    if any(is_otlp_document(document) for _, document in lines):
        return _split_spans(path, lines)
    return [document for _, document in lines]


def _starts_with_otlp_line(data: bytes) -> bool:
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        return is_otlp_document(parse_json(first, "first line"))
    except UntrustedInputError:
        return False


def _split_spans(path: Path, lines: Sequence[tuple[int | None, Any]]) -> list[Any]:
    """An OTLP span file: one trace per root agent run, in the order of the runs' lines; a line that
    is not a well-formed ExportTraceServiceRequest is one unusable slot at its place."""
    spans: list[OtlpSpan] = []
    slots: list[tuple[int, Any]] = []
    for number, document in lines:
        where = f"trace file {path}" + (f" line {number}" if number is not None else "")
        if isinstance(document, _Unusable):
            slots.append((number or 0, document))
            continue
        try:
            spans += otlp_spans(document, order=number or 0)
        except UntrustedInputError as exc:
            slots.append((number or 0, _Unusable(f"{where}: {exc}")))
    traces = [(order // 1_000_000, trace) for order, trace in otlp_traces(spans)]
    if not traces and not slots:
        raise TraceFileError(
            f"trace file {path} holds OpenTelemetry spans but no agent run (a span whose gen_ai.operation.name "
            'is "invoke_agent" or named "invoke_agent <agent>"); record the agent with GenAI instrumentation'
        )
    return [item for _, item in sorted(slots + traces, key=lambda slot: slot[0])]


def _split(path: Path, document: Any) -> list[Any]:
    if is_otlp_document(document):
        return _split_spans(path, [(None, document)])
    if isinstance(document, Mapping) and "simulations" in document:
        try:
            traces = results_traces(document)
        except UntrustedInputError as exc:
            raise TraceFileError(f"trace file {path} is a tau2 Results file whose {exc}") from None
        return [
            _Unusable(f"trace file {path} simulation {number}: {trace}") if isinstance(trace, str) else trace
            for number, trace in enumerate(traces)
        ]
    if isinstance(document, list):
        return document
    return [document]
