"""Reading a PostgreSQL skillbook: whole, or only the rows stamped after a version, as the
`SkillbookState` / `SkillbookChanges` every backend speaks; and the per-process cache of the last
state read, so a writer under the row lock reads only what changed since.

The columns are derived from the closed sets: one counter column per `COUNTERS` name, one `bytea`
vector column and one embedder-name column per `EMBEDDING_FIELDS` kind.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ace.skillbook._skill import COUNTERS, EMBEDDING_FIELDS, SECTIONS, EmbeddingKind, Skill
from ace.skillbook._state import SkillbookChanges, SkillbookState
from ace.skillbook.storage._pg_connection import PgLocation
from ace.skillbook.storage._pg_rows import decoded_json, last_number, model_name, skill_from_row
from ace.untrusted import quote

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

__all__ = [
    "SKILL_COLUMNS",
    "VECTOR_COLUMNS",
    "StoredChanges",
    "StoredState",
    "current_state",
    "fetch_changes",
    "forget",
    "remember",
]

VECTOR_COLUMNS: dict[EmbeddingKind, str] = dict(EMBEDDING_FIELDS)
"""Per vector kind, its `bytea` column on `ace_skills` (and `<column>_model` on `ace_skillbooks`)."""
SKILL_COLUMNS: tuple[str, ...] = (
    "id",
    "section",
    "content",
    "active",
    *COUNTERS,
    "created_at",
    "updated_at",
    *VECTOR_COLUMNS.values(),
)
"""The columns of one skill on `ace_skills`, in the order rows are read and written."""
_LAST_COLUMNS = tuple(f"last_{section}" for section in SECTIONS)


@dataclass(frozen=True, slots=True)
class StoredState:
    """A skillbook as the database held it at `version`."""

    version: int = -1
    """The skillbook row's version (-1: nothing read yet)."""
    state: SkillbookState = field(default_factory=SkillbookState)


@dataclass(frozen=True, slots=True)
class StoredChanges:
    """What changed in the database after some version, up to `version`."""

    version: int
    changes: SkillbookChanges

    def applied_to(self, stored: StoredState) -> StoredState:
        """`stored` moved forward to `version` (`stored` is left as it is)."""
        return StoredState(self.version, stored.state.moved_by(self.changes))


def fetch_changes(
    conn: psycopg.Connection, location: PgLocation, since: int, *, for_update: bool = False
) -> StoredChanges | None:
    """The rows changed after version `since` (-1: everything), or None when the skillbook does not
    exist. Run it inside one transaction (REPEATABLE READ, or after FOR UPDATE) for a consistent read.
    Raises `SkillbookFormatError` (one line naming the database, skill and field) for any row that is
    not valid: rows are untrusted, see `_pg_rows`."""
    from psycopg import sql

    name, where = location.name, location.display
    row = conn.execute(
        sql.SQL("SELECT version, {}, {} FROM ace_skillbooks WHERE name = %s {}").format(
            _identifiers(_LAST_COLUMNS),
            sql.SQL(", ").join(
                sql.SQL("{}::text").format(sql.Identifier(f"{column}_model")) for column in VECTOR_COLUMNS.values()
            ),
            sql.SQL("FOR UPDATE" if for_update else ""),
        ),
        (name,),
    ).fetchone()
    if row is None:
        return None
    version, *rest = row
    numbers, names = rest[: len(SECTIONS)], rest[len(SECTIONS) :]
    last_numbers: dict[str, int] = {
        section: last_number(value, f"{where}: last_{section}") for section, value in zip(SECTIONS, numbers)
    }
    models: dict[EmbeddingKind, str | None] = {
        kind: model_name(value, f"{where}: {column}_model")
        for (kind, column), value in zip(VECTOR_COLUMNS.items(), names)
    }
    if version == since:
        return StoredChanges(version, SkillbookChanges(last_numbers=last_numbers, embedding_models=models))
    skills = _skills_changed(conn, location, since)
    purged = (
        []
        if since < 0
        else [
            r[0]
            for r in conn.execute(
                "SELECT skill_id FROM ace_purged_skills WHERE skillbook = %s AND purged_version > %s", (name, since)
            )
        ]
    )
    decisions = [
        (pair, decoded_json(record, f"{where}: similarity decision {quote(pair)}"))
        for pair, record in conn.execute(
            "SELECT pair, record::text FROM ace_similarity_decisions WHERE skillbook = %s AND updated_version > %s "
            "ORDER BY position",
            (name, since),
        )
        if record is not None or since >= 0
    ]
    return StoredChanges(version, SkillbookChanges(skills, purged, decisions, last_numbers, models))


def _skills_changed(conn: psycopg.Connection, location: PgLocation, since: int) -> list[Skill]:
    """The skills stamped after version `since`, each with its occurrences, checked like a file's."""
    from psycopg import sql

    name = location.name
    occurrences: dict[str, list[Any]] = {}
    for skill_id, record in conn.execute(
        "SELECT o.skill_id, o.record::text FROM ace_occurrences o JOIN ace_skills s "
        "ON s.skillbook = o.skillbook AND s.id = o.skill_id "
        "WHERE s.skillbook = %s AND s.updated_version > %s ORDER BY o.skill_id, o.position",
        (name, since),
    ):
        occurrences.setdefault(skill_id, []).append(record)
    skill_select = sql.SQL(", ").join(
        sql.SQL("{}::text").format(sql.Identifier(column)) if column == "content" else sql.Identifier(column)
        for column in SKILL_COLUMNS
    )
    return [
        skill_from_row(row, occurrences.get(row[0], []), location.display)
        for row in conn.execute(
            sql.SQL("SELECT {} FROM ace_skills WHERE skillbook = %s AND updated_version > %s").format(skill_select),
            (name, since),
        )
    ]


def _identifiers(names: tuple[str, ...]) -> sql.Composed:
    from psycopg import sql

    return sql.SQL(", ").join(sql.Identifier(name) for name in names)


_cache: dict[tuple[int, str, str], StoredState] = {}
_cache_lock = threading.Lock()


def _key(location: PgLocation) -> tuple[int, str, str]:
    return os.getpid(), location.conninfo, location.name


def current_state(conn: psycopg.Connection, location: PgLocation, *, for_update: bool) -> StoredState | None:
    """The skillbook as the database holds it now, reading only rows changed since this process
    last read it. None when it does not exist."""
    with _cache_lock:
        cached = _cache.get(_key(location))
    since = cached.version if cached is not None else -1
    changes = fetch_changes(conn, location, since, for_update=for_update)
    if changes is None:
        return None
    if since >= 0 and changes.version < since:  # the database was reset under us: read it whole
        changes = fetch_changes(conn, location, -1)
        assert changes is not None
    stored = changes.applied_to(cached if since >= 0 and cached is not None else StoredState())
    remember(location, stored)
    return stored


def remember(location: PgLocation, stored: StoredState) -> None:
    """Keep `stored` as what this process last read of (or wrote to) the skillbook."""
    with _cache_lock:
        _cache[_key(location)] = stored


def forget(location: PgLocation) -> None:
    """Drop what this process remembers of the skillbook (after a failed write: read it whole next)."""
    with _cache_lock:
        _cache.pop(_key(location), None)
