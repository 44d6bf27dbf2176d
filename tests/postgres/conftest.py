"""A real PostgreSQL server for the backend tests: `initdb` into a temporary folder, `pg_ctl start` on
a free port of 127.0.0.1 (as the `postgres` user when running as root), stopped at the end of the
session. Without the binaries every test here is skipped, saying why; `.ci/run` installs them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from postgres.pg_server import TempPostgres, missing_binaries


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[TempPostgres]:
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed: pip install -e '.[postgres]'")
    reason = missing_binaries()
    if reason is not None:
        pytest.skip(reason)
    server = TempPostgres()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.remove()


@pytest.fixture
def pg_url(postgres_server: TempPostgres) -> str:
    """The URL of a skillbook of its own (a fresh name) in the session's database."""
    return postgres_server.url(f"t{uuid.uuid4().hex[:12]}")
