"""Loading recorded traces from files: JSON, JSONL, and tau2 `Results` files.

`trace_locations(paths)` lists one `TraceLocation` per trace in the files (a tau2 Results file holds
one per simulation; a JSONL file one per line; a JSON list one per item; any other JSON value is one
trace). `LoadTracesStep` reads the trace a sample points at. A missing or malformed file fails that
sample with a `TraceFileError` that names the file and the problem — never an empty trace.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ace.steps.context import ACEStepContext

__all__ = ["LoadTracesStep", "TraceFileError", "TraceLocation", "load_trace_file", "trace_locations"]


class TraceFileError(ValueError):
    """A trace file is missing, unreadable, or not valid JSON / JSONL; the message says which."""


@dataclasses.dataclass(frozen=True)
class TraceLocation:
    """Where one trace lives: a file, and its position in the file's list of traces."""

    path: Path
    """The file holding the trace."""
    index: int = 0
    """Position of the trace among the file's traces."""


def load_trace_file(path: str | Path) -> list[Any]:
    """Every trace in `path`, in file order. Raises `TraceFileError` when the file is missing,
    unreadable, malformed, or holds no trace. A tau2 Results file gives `{"task", "simulation"}`
    dicts, each simulation paired with its task. The traces are the caller's own copies."""
    return copy.deepcopy(list(_cached_traces(path)))


def trace_locations(paths: Iterable[str | Path]) -> list[TraceLocation]:
    """One location per trace in `paths` (files, or folders searched for *.json / *.jsonl).

    A file that cannot be read still gets one location, so its sample fails with the reason
    instead of vanishing from the run.
    """
    locations: list[TraceLocation] = []
    for path in map(Path, paths):
        files = sorted(p for p in path.rglob("*") if p.suffix in {".json", ".jsonl"}) if path.is_dir() else [path]
        for file in files:
            try:
                count = len(_cached_traces(file))
            except TraceFileError:
                count = 1
            locations.extend(TraceLocation(file, index) for index in range(count))
    return locations


class LoadTracesStep:
    """Read the trace at `ctx.sample` (a `TraceLocation`) into `ctx.trace`; the file name becomes
    the trace's display name unless metadata names one. A context that already carries a trace
    (an in-memory trace) passes through unchanged."""

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
        traces = _cached_traces(location.path)
        if location.index >= len(traces):
            raise TraceFileError(
                f"{location.path} holds {len(traces)} trace(s); index {location.index} does not exist"
            )
        metadata = {"display_name": location.path.name, **ctx.metadata}
        # A copy: the parsed file is cached and shared by every sample that reads from it.
        return ctx.replace(trace=copy.deepcopy(traces[location.index]), metadata=metadata)


def _cached_traces(path: str | Path) -> tuple[Any, ...]:
    return _load(Path(path), _stamp(Path(path)))


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError as exc:
        raise TraceFileError(f"cannot read trace file {path}: {exc.strerror or exc}") from exc
    return stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=8)
def _load(path: Path, stamp: tuple[int, int]) -> tuple[Any, ...]:
    """Parse `path` once per (mtime, size): a Results file with 50 simulations is read once."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"cannot read trace file {path}: {exc}") from exc
    traces = _parse_jsonl(path, text) if path.suffix == ".jsonl" else _split(_parse_json(path, text))
    if not traces:
        raise TraceFileError(f"trace file {path} holds no trace; give a file with at least one")
    return tuple(traces)


def _parse_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFileError(f"trace file {path} is not valid JSON: {exc}") from exc


def _parse_jsonl(path: Path, text: str) -> list[Any]:
    traces = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            traces.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise TraceFileError(f"trace file {path} line {number} is not valid JSON: {exc}") from exc
    return traces


def _split(document: Any) -> list[Any]:
    if isinstance(document, Mapping) and isinstance(document.get("simulations"), list):
        tasks = {str(task.get("id")): task for task in document.get("tasks") or [] if isinstance(task, Mapping)}
        return [
            {"task": tasks.get(str(simulation.get("task_id"))), "simulation": simulation}
            for simulation in document["simulations"]
        ]
    if isinstance(document, list):
        return document
    return [document]
