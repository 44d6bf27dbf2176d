"""Connecting to a PostgreSQL skillbook: its URL parsed once (`PgLocation`), one connection per
thread reused across calls, and every database error turned into one `SkillbookStorageError` line
naming the database, never its password.

psycopg is imported on first use; without the `postgres` extra a `SkillbookStorageError` says so.
"""

from __future__ import annotations

import os
import re
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import filelock

from ace.redaction import redact, url_secrets
from ace.skillbook._errors import SkillbookStorageError
from ace.skillbook.storage._pg_schema import ensure_schema
from ace.untrusted import quote

if TYPE_CHECKING:
    import psycopg

__all__ = ["DEFAULT_NAME", "PgLocation", "connect", "parse_location", "psycopg_module", "session", "storage_error"]

DEFAULT_NAME = "default"
"""The skillbook name when the URL gives no `?skillbook=NAME`."""
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}", re.ASCII)


@dataclass(frozen=True, slots=True)
class PgLocation:
    """A skillbook in a database, parsed from its URL."""

    conninfo: str
    """The URL libpq connects with (the `skillbook` parameter removed)."""
    name: str
    """The skillbook's name inside the database."""
    display: str
    """The URL for messages: secrets hidden (`ace.redaction.redact`)."""
    secrets: tuple[str, ...] = ()
    """The URL's secret strings, hidden wherever a driver's message quotes them."""


def parse_location(url: str) -> PgLocation:
    """Split `postgresql://...[?skillbook=NAME&...]` into what libpq gets and the skillbook name.

    Raises `SkillbookStorageError` for a malformed URL or name."""
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError as exc:
        raise SkillbookStorageError(
            f"not a PostgreSQL URL: {quote(redact(url))} ({redact(str(exc), url_secrets(url))})"
        ) from None
    names = [value for key, value in query if key == "skillbook"]
    name = names[-1] if names else DEFAULT_NAME
    if not _NAME.fullmatch(name):
        raise SkillbookStorageError(f"skillbook name must be 1-64 letters, digits, '_', '.' or '-', got {quote(name)}")
    rest = urlencode([(key, value) for key, value in query if key != "skillbook"])
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
    return PgLocation(conninfo, name, redact(url), url_secrets(url))


def psycopg_module() -> Any:
    """psycopg, or a `SkillbookStorageError` naming the extra that installs it."""
    try:
        import psycopg
    except ImportError:
        raise SkillbookStorageError(
            "a postgresql:// skillbook needs the postgres extra: pip install 'ace[postgres]'"
        ) from None
    return psycopg


def storage_error(location: PgLocation, error: BaseException) -> SkillbookStorageError:
    """A database error as one line naming the database (never its password)."""
    message = " ".join(str(error).split()) or type(error).__name__
    return SkillbookStorageError(f"{location.display}: {redact(message, location.secrets)}")


_migrated: set[tuple[int, str]] = set()


def connect(location: PgLocation, *, connect_timeout: int = 5) -> psycopg.Connection:
    """A new autocommit connection, the schema created or migrated (once per process and database).

    Raises `SkillbookStorageError` when the server cannot be reached or refuses the login."""
    psycopg = psycopg_module()
    try:
        conn = psycopg.connect(location.conninfo, autocommit=True, connect_timeout=connect_timeout)
    except psycopg.Error as exc:
        raise storage_error(location, exc) from None
    try:
        if (os.getpid(), location.conninfo) not in _migrated:
            ensure_schema(conn)
            _migrated.add((os.getpid(), location.conninfo))
    except BaseException as exc:
        conn.close()
        if isinstance(exc, psycopg.Error):
            raise storage_error(location, exc) from None
        raise
    return conn


_sessions = threading.local()


@contextmanager
def session(location: PgLocation) -> Iterator[psycopg.Connection]:
    """This thread's connection to the database, reused across calls; dropped after an error (a
    broken connection is replaced on the next call) and converted to `SkillbookStorageError`."""
    pg = psycopg_module()
    cache: dict[tuple[int, str], psycopg.Connection] = _sessions.__dict__.setdefault("connections", {})
    key = (os.getpid(), location.conninfo)
    conn = cache.get(key)
    if conn is not None and not conn.closed and _hung_up(conn):
        conn.close()  # the server went away (restart, idle timeout) since the last call
    if conn is None or conn.closed:
        conn = cache[key] = connect(location)
    try:
        yield conn
    except pg.errors.LockNotAvailable:
        raise filelock.Timeout(location.display) from None
    except pg.Error as exc:
        cache.pop(key, None)
        conn.close()
        raise storage_error(location, exc) from None


def _hung_up(conn: psycopg.Connection) -> bool:
    """Whether an idle connection (no LISTEN, no query in flight) has something to read: that is
    only ever the server's goodbye (a termination notice or EOF). One zero-timeout poll."""
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
