"""Deprecated alias of `ace.traces.sample` (kept for one release): import `Sample` from `ace.traces`
(or `ace`, `ace.roles`, `ace.steps`)."""

from __future__ import annotations

from ace.traces.sample import Sample

__all__ = ["Sample"]
