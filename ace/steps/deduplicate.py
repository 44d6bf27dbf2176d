"""DeduplicateStep: every N samples, consolidate near-duplicate skills."""

from __future__ import annotations

from ace.deduplication import DeduplicationManager, DeduplicationReport
from ace.skillbook import Skillbook
from ace.steps._every import EveryN
from ace.steps.context import ACEStepContext

__all__ = ["DeduplicateStep"]


class DeduplicateStep:
    """Run the `DeduplicationManager` on the skillbook after every `interval`-th sample.

    Each run's report is kept in `reports` (and logged by the manager), so what was merged is
    visible to the caller.
    """

    requires: frozenset[str] = frozenset()
    provides: frozenset[str] = frozenset()
    max_workers = 1

    def __init__(self, manager: DeduplicationManager, skillbook: Skillbook, *, interval: int = 10) -> None:
        self._every = EveryN(interval, "dedup interval")
        self._manager = manager
        self._skillbook = skillbook
        self.reports: list[DeduplicationReport] = []
        """The report of every deduplication run so far, in order."""

    def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        with self._every.tick() as count:
            if count is not None:
                self.reports.append(self._manager.run(self._skillbook))
        return ctx
