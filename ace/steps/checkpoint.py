"""CheckpointStep: every N samples, save the skillbook to `checkpoint_<n>.json` and `latest.json`."""

from __future__ import annotations

from pathlib import Path

from ace import tracing
from ace.skillbook import Skillbook
from ace.steps._every import EveryN
from ace.steps.context import ACEStepContext

__all__ = ["CheckpointStep"]


class CheckpointStep:
    """Save the skillbook after every `interval`-th sample that reaches this step.

    Saves are atomic (the skillbook writes a temp file and renames it), so a crash leaves the last
    complete checkpoint. `n` counts samples that reached this step, across epochs.
    """

    requires: frozenset[str] = frozenset()
    provides: frozenset[str] = frozenset()
    max_workers = 1

    def __init__(self, skillbook: Skillbook, directory: str | Path, *, interval: int = 10) -> None:
        self._every = EveryN(interval, "checkpoint interval")
        self._skillbook = skillbook
        self._directory = Path(directory)
        self._directory.mkdir(parents=True, exist_ok=True)

    def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        with self._every.tick() as count:
            if count is not None:
                checkpoint = self._directory / f"checkpoint_{count}.json"
                with tracing.span("ace.checkpoint", path=str(checkpoint)):
                    self._skillbook.save_to_file(checkpoint)
                    self._skillbook.save_to_file(self._directory / "latest.json")
        return ctx
