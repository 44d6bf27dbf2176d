"""The storage seam: what every skillbook backend does (`SkillbookStore`), what a locked
read-modify-write holds (`HeldSkillbook`), and what following a stored skillbook gives
(`SkillbookFollower`). Backends speak `SkillbookState` / `SkillbookChanges`, never a Skillbook's
private attributes."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from ace.skillbook._state import SkillbookChanges, SkillbookState

__all__ = ["FollowTarget", "HeldSkillbook", "SkillbookFollower", "SkillbookStore"]


class HeldSkillbook(Protocol):
    """A skillbook read under its store's lock (`SkillbookStore.locked`)."""

    state: SkillbookState
    """The skillbook as read under the lock (empty when the store held none)."""

    def save(self, state: SkillbookState) -> None:
        """Write `state` before the lock is released."""
        ...


class FollowTarget(Protocol):
    """What a follower keeps up to date in place: a `Skillbook`."""

    def restore(self, state: SkillbookState) -> None: ...

    def apply_changes(self, changes: SkillbookChanges) -> None: ...


class SkillbookFollower(Protocol):
    """A stored skillbook followed into one in-process `FollowTarget`: other writers' changes are
    applied to it in place (its change log records which ids changed, so indexes refresh
    incrementally), and `on_change()` is called after each; when it raises, it is called again at
    the next check. When the store cannot be read, the last good state stays and `stale` says why."""

    @property
    def stale(self) -> str | None:
        """Why the state held may be behind the store, in one short line; None when it is not."""
        ...

    def start(self) -> None:
        """Begin following in the background (a follower that checks on `poll` does nothing)."""
        ...

    def poll(self) -> None:
        """Check for a change now and apply it (a follower that follows in the background does nothing)."""
        ...

    def close(self) -> None:
        """Stop following and release what the follower holds (a thread, a connection)."""
        ...


class SkillbookStore(Protocol):
    """Where a skillbook is kept: a JSON file with its embeddings sidecar (`FileStore`) or a
    PostgreSQL database (`PostgresStore`). `open_store(location)` picks the backend."""

    @property
    def location(self) -> object:
        """The location as the backend keeps it: a `Path` for a file, the URL for a database."""
        ...

    @property
    def display(self) -> str:
        """The location for messages: a URL's secrets hidden."""
        ...

    def load(self, *, vectors: bool = True) -> SkillbookState:
        """The stored skillbook. `vectors=False` may skip the vectors (a file's sidecar) when only
        the text is read. Raises `FileNotFoundError` when there is none, `SkillbookFormatError`
        when what is stored is malformed."""
        ...

    def save(self, state: SkillbookState) -> None:
        """Store exactly `state`; a reader sees the old or the new skillbook, never a mix."""
        ...

    def locked(self, *, timeout: float = -1) -> AbstractContextManager[HeldSkillbook]:
        """Read-modify-write across processes: lock, read, yield; the holder saves before the lock
        is released. `timeout` seconds (-1: forever) bound the wait (`filelock.Timeout`)."""
        ...

    def follow(self, target: FollowTarget, *, on_change: Callable[[], None] | None = None) -> SkillbookFollower:
        """Read the stored skillbook into `target` now, and return the follower that keeps it up
        to date. Raises as `load` does."""
        ...
