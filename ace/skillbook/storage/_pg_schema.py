"""The PostgreSQL schema of shared skillbooks: versioned, idempotent migrations.

Every table is keyed by the skillbook's name (one database holds many skillbooks). Text a skill
carries (issue, insight, keywords, occurrences, decisions) is stored as `json`, not `text`: JSON
escapes U+0000, which a PostgreSQL `text` value cannot hold, and `json` (unlike `jsonb`) keeps the
document verbatim, so a file -> database -> file copy is byte-identical. Vectors (each kind a
`Skill` carries: `embedding`, `match_embedding`) are `bytea` of little-endian float32 (no extension
needed), each kind with its embedder's name on the skillbook row.

`updated_version` on skills and decisions, and `purged_version` on tombstones, let a follower load
only what changed after the version it serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, LiteralString

from ace.skillbook._errors import SkillbookStorageError
from ace.skillbook._skill import COUNTERS, EMBEDDING_FIELDS

if TYPE_CHECKING:
    import psycopg

__all__ = ["NOTIFY_CHANNEL", "SCHEMA_VERSION", "ensure_schema"]

NOTIFY_CHANNEL = "ace_skillbook"
"""The LISTEN/NOTIFY channel; each committed write sends `<skillbook name>:<new version>`."""

_MIGRATION_LOCK = 0x61636531  # pg_advisory_xact_lock key: two processes never migrate at once

_MIGRATIONS: tuple[tuple[int, tuple[LiteralString, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE IF NOT EXISTS ace_skillbooks (
            name text PRIMARY KEY,
            version bigint NOT NULL DEFAULT 0,
            last_context bigint NOT NULL DEFAULT 0,
            last_harness bigint NOT NULL DEFAULT 0,
            embedding_model json,
            match_embedding_model json
        )""",
            """CREATE TABLE IF NOT EXISTS ace_skills (
            skillbook text NOT NULL REFERENCES ace_skillbooks (name) ON DELETE CASCADE,
            id text NOT NULL,
            section text NOT NULL,
            content json NOT NULL,
            active boolean NOT NULL,
            used_count bigint NOT NULL,
            helpful_count bigint NOT NULL,
            harmful_count bigint NOT NULL,
            neutral_count bigint NOT NULL,
            created_at text NOT NULL,
            updated_at text NOT NULL,
            embedding bytea,
            match_embedding bytea,
            updated_version bigint NOT NULL,
            PRIMARY KEY (skillbook, id)
        )""",
            "CREATE INDEX IF NOT EXISTS ace_skills_by_version ON ace_skills (skillbook, updated_version)",
            """CREATE TABLE IF NOT EXISTS ace_occurrences (
            skillbook text NOT NULL,
            skill_id text NOT NULL,
            position integer NOT NULL,
            record json NOT NULL,
            PRIMARY KEY (skillbook, skill_id, position),
            FOREIGN KEY (skillbook, skill_id) REFERENCES ace_skills (skillbook, id) ON DELETE CASCADE
        )""",
            """CREATE TABLE IF NOT EXISTS ace_similarity_decisions (
            skillbook text NOT NULL REFERENCES ace_skillbooks (name) ON DELETE CASCADE,
            pair text NOT NULL,
            position bigserial NOT NULL,
            record json,
            updated_version bigint NOT NULL,
            PRIMARY KEY (skillbook, pair)
        )""",
            """CREATE TABLE IF NOT EXISTS ace_purged_skills (
            skillbook text NOT NULL REFERENCES ace_skillbooks (name) ON DELETE CASCADE,
            skill_id text NOT NULL,
            purged_version bigint NOT NULL,
            PRIMARY KEY (skillbook, skill_id)
        )""",
        ),
    ),
)
SCHEMA_VERSION = _MIGRATIONS[-1][0]
"""The schema version this code writes; an older database is migrated, a newer one refused."""


def ensure_schema(conn: psycopg.Connection) -> None:
    """Create or migrate the tables (idempotent; serialised by an advisory lock, in one transaction).

    Raises `SkillbookStorageError` when the database's schema is newer than this code knows.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS ace_schema_version ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM ace_schema_version").fetchone()
        current = row[0] if row else 0
        if current > SCHEMA_VERSION:
            raise SkillbookStorageError(
                f"the database's skillbook schema is v{current}, newer than this ace knows (v{SCHEMA_VERSION}); "
                "upgrade ace"
            )
        for version, statements in _MIGRATIONS:
            if version <= current:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO ace_schema_version (version) VALUES (%s)", (version,))
        _add_derived_columns(conn)


def _add_derived_columns(conn: psycopg.Connection) -> None:
    """A column for every counter (`COUNTERS`) and vector kind (`EMBEDDING_FIELDS`) the `Skill`
    record has, added when missing: a new counter or kind is a new field of `Skill`, not a new
    migration. Only missing columns are altered (an ALTER TABLE locks the table even when it
    changes nothing, which would stall every writer)."""
    from psycopg import sql

    counter, vector, model = sql.SQL("bigint NOT NULL DEFAULT 0"), sql.SQL("bytea"), sql.SQL("json")
    wanted = [("ace_skills", name, counter) for name in COUNTERS]
    wanted += [("ace_skills", name, vector) for name in EMBEDDING_FIELDS.values()]
    wanted += [("ace_skillbooks", f"{name}_model", model) for name in EMBEDDING_FIELDS.values()]
    present = set(
        conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name IN ('ace_skills', 'ace_skillbooks')"
        ).fetchall()
    )
    for table, column, kind in wanted:
        if (table, column) not in present:
            conn.execute(
                sql.SQL("ALTER TABLE {} ADD COLUMN {} {}").format(sql.Identifier(table), sql.Identifier(column), kind)
            )
