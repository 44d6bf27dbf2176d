"""Where skillbooks are kept: one `SkillbookStore` protocol (load, save, locked, follow) and its
backends, a JSON file with its `.embeddings.npz` sidecar (`FileStore`) and a PostgreSQL database
(`PostgresStore`, the `postgres` extra). `open_store(location)` is the one place a location string
is looked at. `Skillbook.load_from_file`, `save_to_file` and `locked` go through it, so a new
backend is a new module here and one branch in `open_store` (docs/architecture.md).

The names below are imported on first use, so a command line can tell a file from a database
without loading numpy or psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.skillbook._errors import SkillbookStorageError
    from ace.skillbook._state import SkillbookChanges, SkillbookState
    from ace.skillbook.storage._file import FileFollower, FileStore, state_from_json
    from ace.skillbook.storage._json_format import embedding_sidecar_path, state_to_json
    from ace.skillbook.storage._location import (
        DATABASE_URL_SCHEMES,
        StorageKind,
        is_database_url,
        open_store,
        storage_kind,
    )
    from ace.skillbook.storage._pg_follow import PgFollower
    from ace.skillbook.storage._postgres import PostgresStore
    from ace.skillbook.storage._protocol import FollowTarget, HeldSkillbook, SkillbookFollower, SkillbookStore

__all__ = [
    "DATABASE_URL_SCHEMES",
    "FileFollower",
    "FileStore",
    "FollowTarget",
    "HeldSkillbook",
    "PgFollower",
    "PostgresStore",
    "SkillbookChanges",
    "SkillbookFollower",
    "SkillbookState",
    "SkillbookStorageError",
    "SkillbookStore",
    "StorageKind",
    "embedding_sidecar_path",
    "is_database_url",
    "open_store",
    "state_from_json",
    "state_to_json",
    "storage_kind",
]

_EXPORTS: dict[str, str] = {
    "DATABASE_URL_SCHEMES": "ace.skillbook.storage._location",
    "FileFollower": "ace.skillbook.storage._file",
    "FileStore": "ace.skillbook.storage._file",
    "FollowTarget": "ace.skillbook.storage._protocol",
    "HeldSkillbook": "ace.skillbook.storage._protocol",
    "PgFollower": "ace.skillbook.storage._pg_follow",
    "PostgresStore": "ace.skillbook.storage._postgres",
    "SkillbookChanges": "ace.skillbook._state",
    "SkillbookFollower": "ace.skillbook.storage._protocol",
    "SkillbookState": "ace.skillbook._state",
    "SkillbookStorageError": "ace.skillbook._errors",
    "SkillbookStore": "ace.skillbook.storage._protocol",
    "StorageKind": "ace.skillbook.storage._location",
    "embedding_sidecar_path": "ace.skillbook.storage._json_format",
    "is_database_url": "ace.skillbook.storage._location",
    "open_store": "ace.skillbook.storage._location",
    "state_from_json": "ace.skillbook.storage._file",
    "state_to_json": "ace.skillbook.storage._json_format",
    "storage_kind": "ace.skillbook.storage._location",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
