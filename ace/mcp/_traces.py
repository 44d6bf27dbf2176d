"""The trace queue of `ace mcp`: `record_trace` writes each trace an agent reports as one JSON file
in a folder beside the skillbook (`<stem>.traces/`), in the shape `ace.steps.load_traces` reads.

A queued trace is a JSON object: `question` (the task), `messages` (a chat transcript, a list of
message objects with a string `role`) or `transcript` (a plain-text one), `feedback` (the outcome),
and `trace_id` / `source_system: "mcp"` / `recorded_at`, which give the trace its identity in
provenance. Learn from the queue with `TraceAnalyser` over `trace_locations([folder])`; nothing in
the server calls a model.

The queue is bounded (`TraceQuota`: at most `MAX_QUEUED_TRACES` files and `MAX_QUEUED_BYTES` bytes
by default): a client that records in a loop fills it, then every further trace is refused with
`TraceQueueFullError` until traces are learned from and removed. Processes sharing one folder each
check the folder as it is, so together they may exceed the bound by one trace each.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ace.atomic_write import write_atomic
from ace.errors import AceError, UsageError
from ace.untrusted import UntrustedInputError, check_text, parse_json, quote

__all__ = [
    "MAX_QUEUED_BYTES",
    "MAX_QUEUED_TRACES",
    "MAX_TRACE_BYTES",
    "SOURCE_SYSTEM",
    "TraceQueueFullError",
    "TraceQuota",
    "TraceRecordError",
    "record_trace",
    "trace_queue_path",
]

MAX_TRACE_BYTES = 2 * 2**20
"""Largest trace file `record_trace` writes (2 MiB of JSON); a longer transcript is refused, not cut."""

MAX_QUEUED_TRACES = 10_000
"""Default most traces the queue holds (`ace mcp --max-queued-traces`)."""

MAX_QUEUED_BYTES = 512 * 2**20
"""Default most bytes of traces the queue holds (`ace mcp --max-queued-bytes`)."""

SOURCE_SYSTEM = "mcp"
"""The `source_system` of queued traces: their provenance says they came through `ace mcp`."""


class TraceRecordError(AceError, ValueError):
    """A trace sent to `record_trace` cannot be queued: a blank task or outcome, a transcript that is
    neither text nor a list of messages with a string `role`, invalid Unicode, nesting or numbers the
    trace loader refuses, or over `MAX_TRACE_BYTES`. The message says which and how to fix it."""


class TraceQueueFullError(TraceRecordError):
    """The trace queue holds as many traces, or as many bytes, as its `TraceQuota` allows, so the
    trace is not written. Learn from the queued traces and remove them (or give the server a larger
    quota); recording works again as soon as the queue is below its bound."""


@dataclass(frozen=True)
class TraceQuota:
    """How much the trace queue may hold; `record_trace` refuses a trace that would go over."""

    max_traces: int = MAX_QUEUED_TRACES
    """Most trace files in the queue."""
    max_bytes: int = MAX_QUEUED_BYTES
    """Most bytes of trace files in the queue."""
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_traces < 1 or self.max_bytes < 1:
            raise UsageError(
                f"a trace quota must allow at least 1 trace and 1 byte, got {self.max_traces} "
                f"traces and {self.max_bytes} bytes"
            )


def trace_queue_path(skillbook_path: str | os.PathLike[str]) -> Path:
    """The queue folder of `skillbook_path`: `team.json` -> `team.traces/` in the same folder."""
    path = Path(skillbook_path)
    return path.with_name(f"{path.stem}.traces")


def record_trace(
    folder: str | os.PathLike[str],
    task: str,
    transcript: str | Sequence[Mapping[str, Any]],
    outcome: str,
    *,
    quota: TraceQuota | None = None,
) -> Path:
    """Write one trace into `folder` (created if missing) atomically; returns the new file.

    File names sort in recording order (`<UTC time>-<random>.json`). Raises `TraceRecordError`
    when the trace is invalid (see the class), `TraceQueueFullError` when `folder` already holds
    what `quota` (default `TraceQuota()`) allows; the file is then not written.
    """
    trace = _trace(task, transcript, outcome)
    text = json.dumps(trace, ensure_ascii=False, allow_nan=False, indent=1)
    data = text.encode("utf-8")
    if len(data) > MAX_TRACE_BYTES:
        raise TraceRecordError(
            f"the trace is {len(data):,} bytes of JSON, over the {MAX_TRACE_BYTES:,}-byte limit; "
            "send a shorter transcript (e.g. without tool outputs that repeat)"
        )
    try:
        # The loader's own checks (nesting depth, integer size): what is queued is what it reads.
        parse_json(data, "the trace")
    except UntrustedInputError as exc:
        raise TraceRecordError(str(exc)) from None
    queue = Path(folder)
    queue.mkdir(parents=True, exist_ok=True)
    quota = quota if quota is not None else TraceQuota()
    path = queue / f"{trace['recorded_at'].replace(':', '').replace('-', '')}-{trace['trace_id'][:12]}.json"
    with quota._lock:  # one check and write at a time in this process
        traces, size = _queued(queue)
        if traces + 1 > quota.max_traces or size + len(data) > quota.max_bytes:
            raise TraceQueueFullError(
                f"the trace queue {queue} is full: it holds {traces:,} traces ({size:,} bytes) and allows "
                f"{quota.max_traces:,} traces and {quota.max_bytes:,} bytes; learn from the queued traces and "
                "remove them, or restart ace mcp with a larger --max-queued-traces / --max-queued-bytes"
            )
        write_atomic(path, lambda handle: handle.write(data))
    return path


def _queued(queue: Path) -> tuple[int, int]:
    """The number of trace files (`*.json`) in `queue` and their total size (links not followed)."""
    traces = size = 0
    with os.scandir(queue) as entries:
        for entry in entries:
            if entry.name.endswith(".json") and not entry.name.startswith("."):
                try:
                    size += entry.stat(follow_symlinks=False).st_size
                except FileNotFoundError:
                    continue  # learned from and removed meanwhile
                traces += 1
    return traces, size


def _trace(task: str, transcript: str | Sequence[Mapping[str, Any]], outcome: str) -> dict[str, Any]:
    task = _non_blank(task, "task", "the task the agent worked on")
    outcome = _non_blank(outcome, "outcome", "how the task ended, e.g. 'tests pass' or 'failed: timeout'")
    trace: dict[str, Any] = {
        "trace_id": uuid.uuid4().hex,
        "source_system": SOURCE_SYSTEM,
        "recorded_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "question": task,
    }
    if isinstance(transcript, str):
        trace["transcript"] = _non_blank(transcript, "transcript", "the conversation as text, or a list of messages")
    elif isinstance(transcript, Sequence) and transcript:
        trace["messages"] = [_message(number, message) for number, message in enumerate(transcript)]
    else:
        raise TraceRecordError(
            f'transcript must be text or a non-empty list of message objects with a "role", got {quote(transcript)}'
        )
    trace["feedback"] = outcome
    return trace


def _non_blank(value: object, name: str, hint: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TraceRecordError(f"{name} must be non-blank text ({hint}), got {quote(value)}")
    try:
        return check_text(value, name)
    except UntrustedInputError as exc:
        raise TraceRecordError(str(exc)) from None


def _message(number: int, message: object) -> dict[str, Any]:
    if not isinstance(message, Mapping):
        raise TraceRecordError(f"transcript message {number} is not an object: {quote(message)}")
    if not isinstance(message.get("role"), str):
        raise TraceRecordError(f'transcript message {number} has no string "role": {quote(message.get("role"))}')
    try:
        check_text(json.dumps(message, ensure_ascii=False, allow_nan=False), f"transcript message {number}")
    except (TypeError, ValueError) as exc:  # UntrustedInputError is a ValueError; NaN too
        raise TraceRecordError(f"transcript message {number} is not plain JSON text: {exc}") from None
    return dict(message)
