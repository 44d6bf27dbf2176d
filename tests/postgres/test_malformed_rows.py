"""PostgreSQL skillbooks under attack (issue 23, class 12): rows edited by hand into malformed
documents are one-line errors (exit 2), `copy --replace` repairs them, and a server following the
database keeps serving the last good state with the stale header instead of losing its follower."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg
import pytest
from fastapi.testclient import TestClient

from ace.cli import main
from ace.server import create_app
from ace.server.app import STALE_HEADER
from ace.skillbook import Skillbook, SkillbookFormatError

DEEP = "[" * 5_000 + "]" * 5_000
"""Deeper than any JSON reader recurses."""

MALFORMED = {
    "odd-length vector": ("UPDATE ace_skills SET embedding = '\\x000102'::bytea", "float32"),
    "deep JSON": (
        f'UPDATE ace_skills SET content = \'{{"keywords": ["k"], "issue": {DEEP}}}\'::json',
        "nested too deeply",
    ),
    "4,301-digit number": (
        f'UPDATE ace_skills SET content = \'{{"keywords": ["k"], "issue": {"9" * 4301}}}\'::json',
        "number that cannot be read",
    ),
    "issue of the wrong type": (
        'UPDATE ace_skills SET content = \'{"keywords": ["k"], "issue": [1]}\'::json',
        "issue must be a non-empty string",
    ),
    "occurrence not an object": ("UPDATE ace_occurrences SET record = '\"x\"'::json", "must be a JSON object"),
    "model name not a string": ("UPDATE ace_skillbooks SET embedding_model = '{\"a\": 1}'::json", "embedding_model"),
}


def _eventually(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def _good_skillbook(url: str) -> None:
    with Skillbook.locked(url) as skillbook:
        skillbook.add_skill("context", "Refunds go to the original payment.", ["refund"], "Refund there.")
        skillbook.tag_skill("context-00001", 1)
        skillbook.set_embeddings({"context-00001": np.ones(4)}, model="fake")


def _edit_by_hand(url: str, statement: str) -> None:
    """Run `statement` (an UPDATE of one table) on the skillbook's rows, as someone with a SQL client
    would, stamping the skills with a new version (so that every reader, even one that read the
    skillbook before, reads the edited rows) and notifying followers."""
    name = url.rsplit("skillbook=", 1)[1]
    table = statement.split()[1]
    key = "name" if table == "ace_skillbooks" else "skillbook"
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn, conn.transaction():
        conn.execute(f"{statement} WHERE {key} = %s", (name,))
        conn.execute("UPDATE ace_skillbooks SET version = version + 1 WHERE name = %s", (name,))
        conn.execute(
            "UPDATE ace_skills SET updated_version = (SELECT version FROM ace_skillbooks WHERE name = %s) "
            "WHERE skillbook = %s",
            (name, name),
        )
        conn.execute("SELECT pg_notify('ace_skillbook', %s)", (f"{name}:edited",))


@pytest.mark.parametrize(("statement", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_row_edited_into_a_malformed_document_is_a_one_line_error_that_copy_replace_repairs(
    statement: str, message: str, pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _good_skillbook(pg_url)
    good = tmp_path / "good.json"
    Skillbook.load_from_file(pg_url).save_to_file(good)
    _edit_by_hand(pg_url, statement)

    with pytest.raises(SkillbookFormatError, match=message):
        Skillbook.load_from_file(pg_url)
    for command in (["skillbook", "show", pg_url], ["skillbook", "remove", pg_url, "context-00001", "--reason", "x"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and "Traceback" not in err, err

    assert main(["skillbook", "copy", str(good), pg_url, "--replace"]) == 0

    repaired = Skillbook.load_from_file(pg_url)
    assert [(s.id, s.issue, s.helpful_count) for s in repaired.skills()] == [
        ("context-00001", "Refunds go to the original payment.", 1)
    ]
    np.testing.assert_array_equal(repaired.get_skill("context-00001").embedding, np.ones(4))


def test_copy_replace_over_malformed_rows_removes_the_skills_it_does_not_hold(pg_url: str, tmp_path: Path) -> None:
    _good_skillbook(pg_url)
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "A second skill.", ["k"], "Do it.")
    _edit_by_hand(pg_url, MALFORMED["deep JSON"][0])
    only_new = Skillbook()
    only_new.add_skill("harness", "The runner retries 429s.", ["tau2"])
    only_new.save_to_file(tmp_path / "new.json")

    assert main(["skillbook", "copy", str(tmp_path / "new.json"), pg_url, "--replace"]) == 0

    repaired = Skillbook.load_from_file(pg_url)
    assert [s.id for s in repaired.skills(include_inactive=True)] == ["harness-00001"]
    with Skillbook.locked(pg_url) as skillbook:  # the id counters never go back
        assert skillbook.add_skill("context", "A third skill.", ["k"], "Do it.").id == "context-00003"


def test_a_malformed_row_does_not_kill_the_follower_of_a_running_server(
    pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _good_skillbook(pg_url)
    good = tmp_path / "good.json"
    Skillbook.load_from_file(pg_url).save_to_file(good)
    app = create_app(pg_url)
    try:
        client = TestClient(app, base_url="http://localhost")
        assert STALE_HEADER not in client.get("/memory/skills").headers
        follower = app.state.followed._follower
        follower.retry_interval = 0.05

        with caplog.at_level(logging.WARNING, logger="ace.skillbook"):
            _edit_by_hand(pg_url, MALFORMED["odd-length vector"][0])
            _eventually(lambda: STALE_HEADER in client.get("/memory/skills").headers)
            answer = client.get("/memory/skills")
            _eventually(lambda: follower._thread.is_alive() and follower.failures >= 3)

        assert answer.status_code == 200 and [s["id"] for s in answer.json()] == ["context-00001"]
        assert "SkillbookFormatError" in answer.headers[STALE_HEADER] and "float32" in answer.headers[STALE_HEADER]
        warnings = [r for r in caplog.records if "cannot be followed" in r.getMessage()]
        assert len(warnings) == 1, [r.getMessage() for r in warnings]  # logged once, retried many times

        assert main(["skillbook", "copy", str(good), pg_url, "--replace"]) == 0
        _eventually(lambda: STALE_HEADER not in client.get("/memory/skills").headers)
        assert follower._thread.is_alive()
    finally:
        app.state.followed.close()
