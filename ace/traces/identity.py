"""Stable identity of a trace: `trace_uid = source_system:trace_id`, inferred, never invented twice.

Order of evidence: explicit metadata (`trace_uid`, or `source_system` + `trace_id`), then the trace
itself (a tau2 simulation's id; a dict's `trace_id`/`id`), then the sample's id, else a content
fingerprint (sha256 of the canonical JSON of the trace), so the same trace always gets the same uid.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ace.errors import UsageError

__all__ = ["TraceIdentity", "infer_trace_identity"]


@dataclasses.dataclass(frozen=True)
class TraceIdentity:
    """Who a trace is; copied into every InsightSource learned from it."""

    source_system: str
    """The system that produced the trace ("tau2", "ace", "content" for a fingerprint, ...)."""
    trace_id: str
    """The trace's id within its source system."""
    display_name: str | None = None
    """A human-friendly label (a file name, a task id), when one is known."""

    @property
    def trace_uid(self) -> str:
        """`source_system:trace_id`, unique across systems."""
        return f"{self.source_system}:{self.trace_id}"


def infer_trace_identity(trace: Any, *, metadata: Mapping[str, Any], sample_id: str | None = None) -> TraceIdentity:
    """Return the identity of `trace` from `metadata`, the trace, `sample_id`, or its content.

    Raises ValueError when metadata gives a `trace_uid` that is not `source_system:trace_id`.
    """
    display_name = _text(metadata.get("display_name"))
    explicit = _from_metadata(metadata, display_name)
    if explicit is not None:
        return explicit
    if isinstance(trace, Mapping):
        found = _from_trace(trace, display_name)
        if found is not None:
            return found
    if sample_id:
        return TraceIdentity("ace", sample_id, display_name)
    return TraceIdentity("content", _fingerprint(trace), display_name)


def _from_metadata(metadata: Mapping[str, Any], display_name: str | None) -> TraceIdentity | None:
    uid = _text(metadata.get("trace_uid"))
    if uid:
        system, _, trace_id = uid.partition(":")
        if not (system and trace_id):
            raise UsageError(f"metadata trace_uid {uid!r} must be 'source_system:trace_id', e.g. 'crm:{uid}'")
        return TraceIdentity(system, trace_id, display_name)
    metadata_id = _text(metadata.get("trace_id"))
    if metadata_id:
        return TraceIdentity(_text(metadata.get("source_system")) or "ace", metadata_id, display_name)
    return None


def _from_trace(trace: Mapping[str, Any], display_name: str | None) -> TraceIdentity | None:
    nested = trace.get("simulation")
    simulation: Mapping[str, Any] = nested if isinstance(nested, Mapping) else trace
    if "task_id" in simulation and "messages" in simulation and _text(simulation.get("id")):
        run = f"task {simulation['task_id']} trial {simulation.get('trial', 0)}"
        name = f"{display_name}: {run}" if display_name else run
        return TraceIdentity("tau2", str(simulation["id"]), name)
    trace_id = _text(trace.get("trace_id")) or _text(trace.get("id"))
    if trace_id:
        return TraceIdentity(_text(trace.get("source_system")) or "ace", trace_id, display_name)
    return None


def _fingerprint(trace: Any) -> str:
    canonical = json.dumps(trace, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None
