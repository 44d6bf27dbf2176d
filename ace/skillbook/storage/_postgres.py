"""`PostgresStore`: a skillbook in a PostgreSQL database, shared by many processes and hosts.

A write takes `SELECT ... FOR UPDATE` on the skillbook's row in `ace_skillbooks`, so writers of one
skillbook are serialised by the database; the per-section id counters live in that row, so ids are
never handed out twice. Only the rows that changed are written (`_pg_diff`), each stamped with the
new version, and `NOTIFY ace_skillbook, '<name>:<version>'` is sent in the same transaction
(delivered on commit). Each process keeps the last state it read per skillbook and, under the
lock, reads only the rows stamped after it (`_pg_state`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ace import tracing
from ace.skillbook._errors import SkillbookFormatError
from ace.skillbook._state import SkillbookState
from ace.skillbook.storage._pg_connection import PgLocation, parse_location, session
from ace.skillbook.storage._pg_diff import row_changes
from ace.skillbook.storage._pg_state import StoredState, current_state, forget, remember
from ace.skillbook.storage._pg_write import clear_unreadable_rows, write_rows
from ace.skillbook.storage._protocol import FollowTarget
from ace.untrusted import quote

if TYPE_CHECKING:
    import psycopg

    from ace.skillbook.storage._pg_follow import PgFollower

__all__ = ["PostgresStore"]


class PostgresStore:
    """A skillbook in a database, named by `postgresql://[user[:password]@]host[:port]/dbname`
    with an optional `?skillbook=NAME` (default `default`; one database holds many skillbooks) and
    any libpq parameter (`sslmode=...`). Needs the `postgres` extra. Every method raises
    `SkillbookStorageError` (one line naming the database, never its password) when the database
    cannot be reached or refuses, `SkillbookFormatError` for a row that is not a valid skill."""

    def __init__(self, url: str) -> None:
        self.location = url
        """The URL as given (it may hold a password: show `display` instead)."""
        self._parsed: PgLocation | None = None

    @property
    def pg(self) -> PgLocation:
        """The URL parsed (on first use: a malformed one raises `SkillbookStorageError` then)."""
        if self._parsed is None:
            self._parsed = parse_location(self.location)
        return self._parsed

    @property
    def display(self) -> str:
        """The URL for messages, secrets hidden."""
        return self.pg.display

    def load(self, *, vectors: bool = True) -> SkillbookState:
        """One consistent read (REPEATABLE READ), vectors included whatever `vectors` says. Raises
        `FileNotFoundError` when the database holds no skillbook of that name."""
        location = self.pg
        with tracing.span("skillbook.load", path=location.display) as span, session(location) as conn:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                stored = current_state(conn, location, for_update=False)
            if stored is None:
                raise FileNotFoundError(
                    2, f"no skillbook named {quote(location.name)} in the database", location.display
                )
            span.set_attribute("skills", len(stored.state.skills))
            return stored.state

    def save(self, state: SkillbookState) -> None:
        """Make the database hold exactly `state`, in one transaction (rows compared with what it
        holds; the id counters never go back). Rows that cannot be read (edited by hand into
        malformed documents) are overwritten whole, as a save overwrites a malformed file: this is
        how `ace skillbook copy --replace` repairs a damaged skillbook."""
        location = self.pg
        with tracing.span("skillbook.save", path=location.display), session(location) as conn:
            with self._failed_writes_forgotten():
                with conn.transaction():
                    base, repaired = self._base_for_update(conn, keep=state)
                    self._write(conn, base, state, by_identity=False, force=repaired)

    @contextmanager
    def locked(self, *, timeout: float = -1) -> Iterator[_Transaction]:
        """One transaction holding the skillbook's row lock from the read (`held.state`) to the
        write (`held.save(state)`, only the changed rows); nothing is written when the block raises.
        `timeout` >= 0 bounds the wait for the lock (`filelock.Timeout` when it expires)."""
        location = self.pg
        with session(location) as conn, self._failed_writes_forgotten(), conn.transaction():
            if timeout >= 0:
                conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{max(int(timeout * 1000), 1)}ms",))
            base, _ = self._base_for_update(conn, keep=None)
            yield _Transaction(self, conn, base)

    def follow(self, target: FollowTarget, *, on_change: Callable[[], None] | None = None) -> PgFollower:
        """A `PgFollower` that has read the whole skillbook into `target` (call `start()` to follow
        other writers through LISTEN/NOTIFY). Raises `FileNotFoundError` when there is none."""
        from ace.skillbook.storage._pg_follow import PgFollower

        return PgFollower(self.pg, target, on_change=on_change)

    # -- one write ---------------------------------------------------------------------------

    def _base_for_update(self, conn: psycopg.Connection, *, keep: SkillbookState | None) -> tuple[StoredState, bool]:
        """The skillbook as the database holds it, its row locked (created empty when missing);
        with `keep`, unreadable rows make way for it (then True)."""
        location = self.pg
        conn.execute("INSERT INTO ace_skillbooks (name) VALUES (%s) ON CONFLICT DO NOTHING", (location.name,))
        try:
            base = current_state(conn, location, for_update=True)
        except SkillbookFormatError:
            if keep is None:
                raise
            return clear_unreadable_rows(conn, location, keep), True
        assert base is not None
        return base, False

    def _write(
        self,
        conn: psycopg.Connection,
        base: StoredState,
        target: SkillbookState,
        *,
        by_identity: bool,
        force: bool = False,
    ) -> None:
        rows = row_changes(base.state, target, by_identity=by_identity, force=force)
        if rows is None:
            return
        version = base.version + 1
        write_rows(conn, self.pg, version, rows)
        remember(
            self.pg,
            StoredState(
                version,
                SkillbookState(target.skills, rows.last_numbers, target.similarity_decisions, rows.embedding_models),
            ),
        )

    @contextmanager
    def _failed_writes_forgotten(self) -> Iterator[None]:
        """After a failed transaction, what this process remembers may be what was never committed:
        forget it, so the next read is whole."""
        try:
            yield
        except BaseException:
            forget(self.pg)
            raise


class _Transaction:
    """The skillbook read under the row lock, and the write at the end of the same transaction."""

    def __init__(self, store: PostgresStore, conn: psycopg.Connection, base: StoredState) -> None:
        self._store, self._conn, self._base = store, conn, base
        self.state: SkillbookState = base.state
        """The skillbook as read under the lock."""

    def save(self, state: SkillbookState) -> None:
        """Write the rows of `state` that are other objects than those read (a mutation replaces
        the Skill, so identity tells which changed)."""
        self._store._write(self._conn, self._base, state, by_identity=True)
