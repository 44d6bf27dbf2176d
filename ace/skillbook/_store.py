"""Where a skillbook is stored: a JSON file (+ `.embeddings.npz` sidecar) or a PostgreSQL database.

A skillbook location is a path, or a URL `postgresql://[user[:password]@]host[:port]/dbname` with an
optional `?skillbook=NAME` (default `default`; one database holds many skillbooks) and any libpq
parameter (`sslmode=...`). `Skillbook.load_from_file`, `save_to_file` and `locked` accept both;
the PostgreSQL backend lives in `_pg_store` and needs the `postgres` extra.
"""

from __future__ import annotations

from os import PathLike

from ace.skillbook._errors import SkillbookError

__all__ = ["DATABASE_URL_SCHEMES", "SkillbookStorageError", "is_database_url"]

DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")


class SkillbookStorageError(SkillbookError):
    """The skillbook's database could not be reached or refused the operation (connection refused,
    authentication failed, the `postgres` extra missing, a schema newer than this code).

    The message is one line naming the database (never its password) and the cause; check the URL
    and that the server is up, then retry. Raised by the PostgreSQL backend only; a file backend
    raises `OSError` as before.
    """


def is_database_url(location: str | PathLike[str]) -> bool:
    """Whether `location` names a PostgreSQL skillbook (a `postgresql://` or `postgres://` URL)."""
    return isinstance(location, str) and location.startswith(DATABASE_URL_SCHEMES)
