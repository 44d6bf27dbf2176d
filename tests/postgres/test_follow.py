"""Replicas follow other processes' writes through LISTEN/NOTIFY, incrementally, and survive a
database restart (serving the last good state, with the stale header, meanwhile)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from ace.server import create_app
from ace.server.app import STALE_HEADER
from ace.skillbook import Skillbook
from ace.skillbook.storage import open_store
from postgres.pg_server import TempPostgres, missing_binaries


def _eventually(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def _add_in_another_process(url: str, issue: str) -> None:
    code = (
        "import sys; from ace.skillbook import Skillbook\n"
        "with Skillbook.locked(sys.argv[1]) as sb: sb.add_skill('context', sys.argv[2], ['k'], 'Do it.')"
    )
    subprocess.run([sys.executable, "-c", code, url, issue], check=True, timeout=60)


def test_follower_sees_another_process_write_and_records_only_that_id(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "First.", ["k"], "Do it.")
    followed = Skillbook()
    follower = open_store(pg_url).follow(followed)
    follower.poll_interval = 30  # a long poll: only NOTIFY can make this fast
    follower.start()
    try:
        served = followed.version
        _add_in_another_process(pg_url, "Second.")
        _eventually(lambda: followed.get_skill("context-00002") is not None, timeout=10)
        assert followed.changed_ids_since(served) == {"context-00002"}
        assert follower.stale is None
    finally:
        follower.close()


def test_served_api_answers_a_write_from_another_process_without_restart(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill(
            "context",
            "When a reservation is cancelled, refund to the original payment.",
            ["refund"],
            "Refund to the original payment method.",
        )
    app = create_app(pg_url)
    client = TestClient(app, base_url="http://localhost")
    assert [s["id"] for s in client.get("/memory/skills").json()] == ["context-00001"]
    _add_in_another_process(pg_url, "Baggage allowance depends on the cabin class and membership tier.")
    _eventually(lambda: len(client.get("/memory/skills").json()) == 2)
    matches = client.get("/memory/skills", params={"task": "how many bags may a gold member check in economy?"})
    assert matches.status_code == 200
    app.state.followed.close()


@pytest.mark.skipif(missing_binaries() is not None, reason=str(missing_binaries()))
def test_server_keeps_serving_while_the_database_is_down_and_recovers() -> None:
    server = TempPostgres()
    server.start()
    url = server.url("restart")
    app = None
    try:
        with Skillbook.locked(url) as skillbook:
            skillbook.add_skill("context", "Refunds go to the original payment.", ["refund"], "Refund there.")
        app = create_app(url)
        client = TestClient(app, base_url="http://localhost")
        server.stop()
        _eventually(lambda: STALE_HEADER in client.get("/memory/skills").headers)
        answer = client.get("/memory/skills")
        assert answer.status_code == 200 and [s["id"] for s in answer.json()] == ["context-00001"]
        assert "SkillbookStorageError" in answer.headers[STALE_HEADER]
        server.start()
        with Skillbook.locked(url) as skillbook:
            skillbook.add_skill("context", "Seat changes are free in business.", ["seat"], "Offer them.")
        _eventually(lambda: len(client.get("/memory/skills").json()) == 2, timeout=20)
        assert STALE_HEADER not in client.get("/memory/skills").headers
    finally:
        if app is not None:
            app.state.followed.close()
        try:
            server.stop()
        except subprocess.CalledProcessError:
            pass
        server.remove()


def test_the_server_stops_following_the_database_when_it_shuts_down(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "First.", ["k"], "Do it.")
    app = create_app(pg_url)
    follower = app.state.followed._follower

    with TestClient(app, base_url="http://localhost") as client:  # runs the app's lifespan
        assert client.get("/memory/skills").status_code == 200
        assert follower._thread.is_alive()

    assert not follower._thread.is_alive() and follower._conn is None
