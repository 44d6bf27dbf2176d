"""Skillbook.load_from_file / save_to_file / locked on a postgresql:// URL, against a real server."""

from __future__ import annotations

import numpy as np
import pytest

from ace.skillbook import InsightSource, Skillbook, SkillbookStorageError
from ace.skillbook.storage._pg_schema import SCHEMA_VERSION

SOURCE = InsightSource(source_system="tests", trace_id="t1")


def _sample() -> Skillbook:
    skillbook = Skillbook()
    skillbook.add_skill(
        "context", "Cabin class applies to all legs.", ["airline", "cabin"], "Say so.", insight_source=SOURCE
    )
    skillbook.add_skill("harness", "The runner retries 429s.", ["tau2"])
    skillbook.record_keep_decision("context-00001", "harness-00001", reasoning="distinct", similarity=0.5)
    skillbook.set_embeddings({"context-00001": [0.25, 0.5, 1.0]}, model="fake-embedder")
    return skillbook


def test_save_then_load_gives_the_same_document_and_vectors(pg_url: str) -> None:
    original = _sample()
    original.save_to_file(pg_url)
    loaded = Skillbook.load_from_file(pg_url)
    assert loaded.to_dict() == original.to_dict()
    assert loaded.embedding_model == "fake-embedder"
    np.testing.assert_array_equal(loaded.get_skill("context-00001").embedding, [0.25, 0.5, 1.0])
    assert loaded.get_skill("harness-00001").embedding is None


def test_locked_block_is_written_and_an_error_inside_writes_nothing(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "An issue.", ["k"], "An insight.")
    with pytest.raises(RuntimeError), Skillbook.locked(pg_url) as skillbook:
        skillbook.tag_skill("context-00001", 1)
        raise RuntimeError("abort")
    assert Skillbook.load_from_file(pg_url).get_skill("context-00001").helpful_count == 0


def test_purged_id_is_never_handed_out_again(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "First.", ["k"], "Do it.")
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.purge("context-00001")
    with Skillbook.locked(pg_url) as skillbook:
        assert skillbook.add_skill("context", "Second.", ["k"], "Do it.").id == "context-00002"
    assert [s.id for s in Skillbook.load_from_file(pg_url).skills()] == ["context-00002"]


def test_text_with_nul_characters_survives_the_database(pg_url: str) -> None:
    skillbook = Skillbook()
    skillbook.add_skill("context", "Issue with a \x00 NUL.", ["k"], "Insight \x00.")
    skillbook.save_to_file(pg_url)
    assert Skillbook.load_from_file(pg_url).get_skill("context-00001").issue == "Issue with a \x00 NUL."


def test_unknown_skillbook_name_is_file_not_found(pg_url: str) -> None:
    with pytest.raises(FileNotFoundError, match="no skillbook named"):
        Skillbook.load_from_file(pg_url)


def test_unreachable_database_is_one_line_storage_error_without_password() -> None:
    url = "postgresql://ace:secret@127.0.0.1:1/postgres?skillbook=x&connect_timeout=2"
    with pytest.raises(SkillbookStorageError) as raised:
        Skillbook.load_from_file(url)
    message = str(raised.value)
    assert "\n" not in message and "secret" not in message and "127.0.0.1" in message


def test_bad_skillbook_name_is_refused(postgres_server) -> None:
    with pytest.raises(SkillbookStorageError, match="skillbook name"):
        Skillbook.load_from_file(postgres_server.url("a b"))


def test_schema_version_is_recorded_and_migrations_are_idempotent(pg_url: str, postgres_server) -> None:
    import psycopg

    from ace.skillbook.storage._pg_schema import ensure_schema

    Skillbook().save_to_file(pg_url)
    with psycopg.connect(postgres_server.url().split("?")[0], autocommit=True) as conn:
        ensure_schema(conn)
        ensure_schema(conn)
        versions = [row[0] for row in conn.execute("SELECT version FROM ace_schema_version ORDER BY version")]
    assert versions == list(range(1, SCHEMA_VERSION + 1))


def test_each_write_bumps_the_version_and_notifies(pg_url: str, postgres_server) -> None:
    import psycopg

    Skillbook().save_to_file(pg_url)
    name = pg_url.rsplit("=", 1)[1]
    with psycopg.connect(postgres_server.url().split("?")[0], autocommit=True) as conn:
        conn.execute("LISTEN ace_skillbook")
        with Skillbook.locked(pg_url) as skillbook:
            skillbook.add_skill("context", "Issue.", ["k"], "Insight.")
        payloads = [n.payload for n in conn.notifies(timeout=5, stop_after=1)]
    assert payloads == [f"{name}:1"]  # saving the empty skillbook changed nothing: no version
