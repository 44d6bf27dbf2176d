"""ExportMarkdownStep: keep a human-readable Markdown copy of the skillbook up to date."""

from __future__ import annotations

import threading
from pathlib import Path

from ace.atomic_write import write_text_atomic
from ace.skillbook import Skillbook, render_markdown
from ace.steps.context import ACEStepContext

__all__ = ["ExportMarkdownStep"]


class ExportMarkdownStep:
    """Write `render_markdown(skillbook)` to `path` after every `interval`-th sample (atomically)."""

    requires = frozenset()
    provides = frozenset()
    max_workers = 1

    def __init__(self, skillbook: Skillbook, path: str | Path, *, interval: int = 1) -> None:
        if interval < 1:
            raise ValueError(f"export interval must be >= 1; got {interval}")
        self._skillbook = skillbook
        self._path = Path(path)
        self._interval = interval
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        with self._lock:
            self._count += 1
            if self._count % self._interval == 0:
                write_text_atomic(self._path, render_markdown(self._skillbook.skills(include_inactive=True)))
        return ctx
