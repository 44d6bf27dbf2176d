"""Deprecated alias of `ace.traces.identity` (kept for one release): import `TraceIdentity` and
`infer_trace_identity` from `ace.traces` (or `ace.steps`)."""

from __future__ import annotations

from ace.traces.identity import TraceIdentity, infer_trace_identity

__all__ = ["TraceIdentity", "infer_trace_identity"]
