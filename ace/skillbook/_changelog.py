"""A bounded log of which skill ids changed at which skillbook version (for incremental indexes)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

__all__ = ["ChangeLog"]


class ChangeLog:
    """Records, per version bump, the ids it touched and whether their content changed.

    Only the last `capacity` bumps are kept; asking about an older version answers None ("the log no
    longer reaches back; rebuild everything"). Not thread-safe: the Skillbook calls it under its lock.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._entries: deque[tuple[int, frozenset[str], bool]] = deque(maxlen=capacity)
        self._version = 0
        self._floor = 0

    @property
    def version(self) -> int:
        """The current version: the number of recorded bumps."""
        return self._version

    def record(self, ids: Iterable[str], *, content: bool) -> int:
        """Bump the version, noting `ids` as changed (`content`: their text/active state changed)."""
        if len(self._entries) == self._entries.maxlen:
            self._floor = self._entries[0][0]
        self._version += 1
        self._entries.append((self._version, frozenset(ids), content))
        return self._version

    def changed_since(self, version: int, *, content_only: bool = False) -> frozenset[str] | None:
        """Ids changed after `version`, or None when the log does not reach back that far or
        `version` is ahead of this log (it came from another skillbook)."""
        if version < self._floor or version > self._version:
            return None
        changed: set[str] = set()
        for entry_version, ids, content in reversed(self._entries):
            if entry_version <= version:
                break
            if content or not content_only:
                changed |= ids
        return frozenset(changed)
