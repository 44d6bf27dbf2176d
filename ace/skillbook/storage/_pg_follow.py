"""`PgFollower`: one in-process Skillbook kept up to date with a PostgreSQL skillbook.

It LISTENs on `ace_skillbook`; on each notification (and every `poll_interval` seconds, which also
proves the connection alive) it reads only the rows stamped after the version it holds, in one
REPEATABLE READ transaction, and applies them to its Skillbook in place. The Skillbook's change log
records exactly the ids that changed, so indexes that follow it (`SkillMatcher`) refresh
incrementally. When the database is unreachable, or holds rows that cannot be read (edited by hand
into malformed documents), or anything else fails, the last good state stays and `stale` says why;
the follower logs each new reason once, retries every `retry_interval` seconds and catches up
(notifications missed meanwhile are covered by reading everything after the held version). Its
thread never ends on an error: only `close()` ends it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ace.redaction import redact
from ace.skillbook.storage._pg_connection import PgLocation, connect, psycopg_module, storage_error
from ace.skillbook.storage._pg_schema import NOTIFY_CHANNEL
from ace.skillbook.storage._pg_state import StoredState, fetch_changes
from ace.skillbook.storage._protocol import FollowTarget

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgFollower"]

logger = logging.getLogger("ace.skillbook")


class PgFollower:
    """Keeps `target` at the state of a database skillbook (`version`), following its changes in
    a background thread once `start()` is called (`close()` stops it). A `SkillbookFollower`."""

    def __init__(
        self,
        location: PgLocation,
        target: FollowTarget,
        *,
        on_change: Callable[[], None] | None = None,
        poll_interval: float = 1.0,
        retry_interval: float = 1.0,
    ) -> None:
        """Read the whole skillbook into `target` now. Raises `SkillbookStorageError` when the
        database cannot be reached and `FileNotFoundError` when it holds no skillbook of that name.

        `on_change()` is called from the follower's thread after each applied change."""
        self.location = location
        self.target = target
        self.on_change: Callable[[], None] | None = None  # not during the first read
        self.poll_interval = poll_interval
        self.retry_interval = retry_interval
        self._state = StoredState()
        self._stale: str | None = None
        self.failures = 0
        """Attempts to follow that failed in a row since the last success (0 when following)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        conn = connect(self.location)
        try:
            conn.execute(f"LISTEN {NOTIFY_CHANNEL}")  # before the read: no write can fall in between
            self._catch_up(conn)
        except BaseException:
            conn.close()
            raise
        self._conn: psycopg.Connection | None = conn
        self._announced = self._state.version
        """The version `on_change` was last called for (it is called again until it succeeds)."""
        self.on_change = on_change

    @property
    def version(self) -> int:
        """The database version of the state held."""
        return self._state.version

    @property
    def stale(self) -> str | None:
        """Why the state held may be behind the database (it cannot be reached), or None."""
        return self._stale

    def poll(self) -> None:
        """Nothing: the follower's thread applies changes as they are committed."""

    def start(self) -> None:
        """Follow changes in a daemon thread."""
        self._thread = threading.Thread(target=self._run, name=f"ace-pg-follow-{self.location.name}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop following and close the connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _run(self) -> None:
        psycopg = psycopg_module()
        while not self._stop.is_set():
            try:
                if self._conn is None:
                    self._conn = connect(self.location)
                    self._conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self._catch_up(self._conn)
                for _ in self._conn.notifies(timeout=self.poll_interval, stop_after=1):
                    pass
                self._catch_up(self._conn)
            except Exception as error:
                if self._stop.is_set():
                    return  # close() pulled the connection from under a wait: an end, not a failure
                self._failed(storage_error(self.location, error) if isinstance(error, psycopg.Error) else error)

    def _failed(self, error: Exception) -> None:
        """Keep the last good state, say why in `stale` (logged once per new reason), drop the
        connection and wait `retry_interval` before the next try."""
        message = redact(" ".join(str(error).split()), self.location.secrets)[:300]
        reason = f"{type(error).__name__}: {message}"
        if self._stale != reason:
            logger.warning(
                "skillbook %s cannot be followed (%s); serving the last good state, retrying every %g s",
                self.location.display,
                reason,
                self.retry_interval,
            )
        self._stale = reason
        self.failures += 1
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None
        self._stop.wait(self.retry_interval)

    def _catch_up(self, conn: psycopg.Connection) -> None:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            changes = fetch_changes(conn, self.location, self._state.version)
            if changes is not None and changes.version < self._state.version:
                changes = fetch_changes(conn, self.location, -1)  # the database was reset: read it whole
        if changes is None:
            raise FileNotFoundError(
                2, f"no skillbook named {self.location.name!r} in the database", self.location.display
            )
        if changes.version != self._state.version:
            if changes.version < self._state.version or self._state.version < 0:
                self._state = changes.applied_to(StoredState())
                self.target.restore(self._state.state)
            else:
                self.target.apply_changes(changes.changes)
                self._state = changes.applied_to(self._state)
        if self.on_change is not None and self._announced != self._state.version:
            self.on_change()  # when it raises, the next catch-up calls it again
            self._announced = self._state.version
        self._stale = None
        self.failures = 0
