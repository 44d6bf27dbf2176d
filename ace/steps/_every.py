"""Counting samples for the steps that act every N samples."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ace.errors import UsageError

__all__ = ["EveryN"]


class EveryN:
    """A thread-safe sample counter that says when the N-th, 2N-th, ... sample arrives."""

    def __init__(self, interval: int, what: str) -> None:
        """Raises ValueError naming `what` (e.g. "checkpoint interval") when `interval` < 1."""
        if interval < 1:
            raise UsageError(f"{what} must be >= 1; got {interval}")
        self._interval = interval
        self._count = 0
        self._lock = threading.Lock()

    @contextmanager
    def tick(self) -> Iterator[int | None]:
        """Count one sample; yield the count when it is due (else None). The lock is held for the
        whole block, so the action of one due sample never overlaps another's."""
        with self._lock:
            self._count += 1
            yield self._count if self._count % self._interval == 0 else None
