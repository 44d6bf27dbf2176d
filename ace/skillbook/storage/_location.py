"""Where a skillbook is stored, decided once: a path names a JSON file (+ `.embeddings.npz`
sidecar), a URL `postgresql://[user[:password]@]host[:port]/dbname[?skillbook=NAME&...]` names a
PostgreSQL database. `open_store(location)` is the one place that looks at the string."""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ace.skillbook.storage._file import FileStore
    from ace.skillbook.storage._postgres import PostgresStore

__all__ = ["DATABASE_URL_SCHEMES", "StorageKind", "is_database_url", "open_store", "storage_kind"]

DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")
"""The prefixes of a database location."""

StorageKind = Literal["file", "postgresql"]
"""The backends: a JSON file with its sidecar, or a PostgreSQL database."""


def storage_kind(location: str | PathLike[str]) -> StorageKind:
    """Which backend `location` names: `postgresql` for a `postgresql://` or `postgres://` URL,
    else `file`. Cheap: nothing is imported, parsed or opened."""
    return "postgresql" if isinstance(location, str) and location.startswith(DATABASE_URL_SCHEMES) else "file"


def is_database_url(location: str | PathLike[str]) -> bool:
    """Whether `location` names a PostgreSQL skillbook (kept for callers of 0.1; prefer
    `open_store` or `storage_kind`)."""
    return storage_kind(location) == "postgresql"


def open_store(location: str | PathLike[str]) -> FileStore | PostgresStore:
    """The store `location` names. Nothing is read or connected yet (and a URL is parsed on first
    use), so this never fails; the store's methods raise what its backend raises."""
    if storage_kind(location) == "postgresql":
        from ace.skillbook.storage._postgres import PostgresStore

        return PostgresStore(str(location))
    from ace.skillbook.storage._file import FileStore

    return FileStore(location)
