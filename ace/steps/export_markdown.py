"""ExportMarkdownStep: keep a human-readable Markdown copy of the skillbook up to date."""

from __future__ import annotations

from pathlib import Path

from ace.atomic_write import write_text_atomic
from ace.skillbook import Skillbook, render_markdown
from ace.steps._every import EveryN
from ace.steps.context import ACEStepContext

__all__ = ["ExportMarkdownStep"]


class ExportMarkdownStep:
    """Write `render_markdown(skillbook)` to `path` after every `interval`-th sample (atomically)."""

    requires: frozenset[str] = frozenset()
    provides: frozenset[str] = frozenset()
    max_workers = 1

    def __init__(self, skillbook: Skillbook, path: str | Path, *, interval: int = 1) -> None:
        self._every = EveryN(interval, "export interval")
        self._skillbook = skillbook
        self._path = Path(path)

    def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        with self._every.tick() as count:
            if count is not None:
                write_text_atomic(self._path, render_markdown(self._skillbook.skills(include_inactive=True)))
        return ctx
