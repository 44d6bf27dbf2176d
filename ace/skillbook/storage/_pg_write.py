"""Writing a PostgreSQL skillbook: the statements for a `RowChanges`, composed with `psycopg.sql`
from the derived column lists, and the repair of rows that cannot be read. Every function runs
inside the caller's transaction, with the skillbook's row locked `FOR UPDATE`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ace.skillbook._skill import SECTIONS, Skill
from ace.skillbook._state import SkillbookState
from ace.skillbook.storage._json_format import MAX_ID_NUMBER
from ace.skillbook.storage._pg_connection import PgLocation
from ace.skillbook.storage._pg_diff import RowChanges
from ace.skillbook.storage._pg_schema import NOTIFY_CHANNEL
from ace.skillbook.storage._pg_state import SKILL_COLUMNS, VECTOR_COLUMNS, StoredState

if TYPE_CHECKING:
    import psycopg

__all__ = ["clear_unreadable_rows", "write_rows"]

_TOMBSTONE = (
    "INSERT INTO ace_purged_skills (skillbook, skill_id, purged_version) VALUES (%s, %s, %s) "
    "ON CONFLICT (skillbook, skill_id) DO UPDATE SET purged_version = EXCLUDED.purged_version"
)


def write_rows(conn: psycopg.Connection, location: PgLocation, version: int, rows: RowChanges) -> None:
    """Write `rows`, stamp them and the skillbook row with `version`, and notify followers (the
    notification is delivered on commit)."""
    from psycopg import sql
    from psycopg.types.json import Json

    name = location.name
    with conn.cursor() as cur:
        if rows.purged:
            cur.execute("DELETE FROM ace_skills WHERE skillbook = %s AND id = ANY(%s)", (name, list(rows.purged)))
            cur.executemany(_TOMBSTONE, [(name, skill_id, version) for skill_id in rows.purged])
        _write_skills(cur, name, version, rows)
        if rows.decided:
            cur.executemany(
                "INSERT INTO ace_similarity_decisions AS d (skillbook, pair, record, updated_version) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (skillbook, pair) DO UPDATE SET record = EXCLUDED.record, "
                "updated_version = EXCLUDED.updated_version, "
                "position = CASE WHEN d.record IS NULL THEN EXCLUDED.position ELSE d.position END",
                [(name, pair, Json(record), version) for pair, record in rows.decided],
            )
        if rows.undecided:
            cur.execute(
                "UPDATE ace_similarity_decisions SET record = NULL, updated_version = %s "
                "WHERE skillbook = %s AND pair = ANY(%s)",
                (version, name, list(rows.undecided)),
            )
        settings: list[tuple[str, Any]] = [("version", version)]
        settings += [(f"last_{section}", rows.last_numbers[section]) for section in SECTIONS]
        settings += [
            (f"{column}_model", None if rows.embedding_models.get(kind) is None else Json(rows.embedding_models[kind]))
            for kind, column in VECTOR_COLUMNS.items()
        ]
        cur.execute(
            sql.SQL("UPDATE ace_skillbooks SET {} WHERE name = %s").format(
                sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(column)) for column, _ in settings)
            ),
            (*(value for _, value in settings), name),
        )
        cur.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, f"{name}:{version}"))


def _write_skills(cur: psycopg.Cursor[Any], name: str, version: int, rows: RowChanges) -> None:
    """The skill and occurrence rows of `rows`."""
    from psycopg import sql
    from psycopg.types.json import Json

    if rows.upserted:
        cur.execute(
            "DELETE FROM ace_purged_skills WHERE skillbook = %s AND skill_id = ANY(%s)",
            (name, [skill.id for skill in rows.upserted]),
        )
        columns = (*SKILL_COLUMNS, "skillbook", "updated_version")
        updated = [column for column in columns if column not in ("id", "skillbook")]
        cur.executemany(
            sql.SQL("INSERT INTO ace_skills ({}) VALUES ({}) ON CONFLICT (skillbook, id) DO UPDATE SET {}").format(
                sql.SQL(", ").join(map(sql.Identifier, columns)),
                sql.SQL(", ").join(sql.Placeholder() * len(columns)),
                sql.SQL(", ").join(sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(column)) for column in updated),
            ),
            [(*_skill_row(skill), name, version) for skill in rows.upserted],
        )
    if rows.rewritten:
        cur.execute(
            "DELETE FROM ace_occurrences WHERE skillbook = %s AND skill_id = ANY(%s)", (name, list(rows.rewritten))
        )
    if rows.occurrences:
        cur.executemany(
            "INSERT INTO ace_occurrences (skillbook, skill_id, position, record) VALUES (%s, %s, %s, %s)",
            [(name, skill_id, position, Json(record.to_dict())) for skill_id, position, record in rows.occurrences],
        )


def _skill_row(skill: Skill) -> tuple[Any, ...]:
    """A skill's values in `SKILL_COLUMNS` order."""
    from psycopg.types.json import Json

    values: dict[str, Any] = {
        "id": skill.id,
        "section": skill.section,
        "content": Json({"keywords": list(skill.keywords), "issue": skill.issue, "insight": skill.insight}),
        "active": skill.active,
        "created_at": skill.created_at,
        "updated_at": skill.updated_at,
        **skill.counters(),
    }
    for column in VECTOR_COLUMNS.values():
        vector = getattr(skill, column)
        values[column] = None if vector is None else vector.astype("<f4").tobytes()
    return tuple(values[column] for column in SKILL_COLUMNS)


def clear_unreadable_rows(conn: psycopg.Connection, location: PgLocation, keep: SkillbookState) -> StoredState:
    """Make way for `keep` over rows that cannot be read: delete the skills it does not hold
    (tombstoned, so followers drop them), every occurrence, and the decisions it does not hold
    (nulled); return the state to write against, holding only the row's version and counters
    (clamped to valid ones)."""
    from psycopg import sql

    name = location.name
    row = conn.execute(
        sql.SQL("SELECT version, {} FROM ace_skillbooks WHERE name = %s FOR UPDATE").format(
            sql.SQL(", ").join(sql.Identifier(f"last_{section}") for section in SECTIONS)
        ),
        (name,),
    ).fetchone()
    assert row is not None  # inserted by the caller
    version, *numbers = row
    with conn.cursor() as cur:
        cur.execute("DELETE FROM ace_occurrences WHERE skillbook = %s", (name,))
        cur.execute(
            "DELETE FROM ace_skills WHERE skillbook = %s AND NOT (id = ANY(%s)) RETURNING id", (name, list(keep.skills))
        )
        gone = [(name, skill_id, version + 1) for (skill_id,) in cur.fetchall()]
        if gone:
            cur.executemany(_TOMBSTONE, gone)
        cur.execute(
            "UPDATE ace_similarity_decisions SET record = NULL, updated_version = %s "
            "WHERE skillbook = %s AND record IS NOT NULL AND NOT (pair = ANY(%s))",
            (version + 1, name, list(keep.similarity_decisions)),
        )
    last_numbers: dict[str, int] = {
        section: min(max(value, 0), MAX_ID_NUMBER) for section, value in zip(SECTIONS, numbers)
    }
    return StoredState(version, SkillbookState(last_numbers=last_numbers))
