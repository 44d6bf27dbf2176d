"""The API follows the skillbook file without a restart, and never serves a broken file."""

from __future__ import annotations

import json
import logging

from matching.fixture_skills import PYTEST_UTC, PYTEST_UTC_ISSUE, ROOM_BOOKING_TASK, add_room_booking_skill


def ids(response) -> list[str]:
    return [item["id"] for item in response.json()]


def test_skill_added_by_a_save_is_listed_and_matched_without_restart(client, skillbook, skillbook_path):
    assert client.get("/memory/skills", params={"task": ROOM_BOOKING_TASK}).json() == []

    added = add_room_booking_skill(skillbook)
    skillbook.save_to_file(skillbook_path)

    assert ids(client.get("/memory/skills")) == [
        *(f"context-0000{n}" for n in range(1, 7)),
        added.id,
        "harness-00001",
        "harness-00002",
    ]
    assert ids(client.get("/memory/skills", params={"task": ROOM_BOOKING_TASK})) == [added.id]


def test_reactivated_skill_matches_its_own_issue_after_the_file_changes(client, skillbook, skillbook_path):
    assert PYTEST_UTC not in ids(client.get("/memory/skills", params={"task": PYTEST_UTC_ISSUE}))

    skillbook.activate_skill(PYTEST_UTC)
    skillbook.save_to_file(skillbook_path)

    assert ids(client.get("/memory/skills", params={"task": PYTEST_UTC_ISSUE}))[:1] == [PYTEST_UTC]


def test_broken_file_keeps_the_last_good_state_until_a_valid_save(client, skillbook, skillbook_path):
    before = client.get("/memory/skills")
    skillbook_path.write_text('{"schema_version": "2", "skills": {')

    stale = client.get("/memory/skills")
    assert stale.content == before.content
    assert "X-Skillbook-Stale" not in before.headers
    assert stale.headers["X-Skillbook-Stale"].startswith("SkillbookFormatError")

    skillbook.remove_skill("context-00001", "obsolete")
    skillbook.save_to_file(skillbook_path)

    fresh = client.get("/memory/skills")
    assert "context-00001" not in ids(fresh)
    assert len(ids(fresh)) == 7
    assert "X-Skillbook-Stale" not in fresh.headers


def test_a_failed_reload_is_logged_with_its_error_where_an_operator_sees_it(client, skillbook_path, caplog, capfire):
    skillbook_path.write_text('{"schema_version": "2", "skills": {')

    with caplog.at_level(logging.WARNING, logger="ace.server"):
        client.get("/memory/skills")

    [record] = caplog.records
    assert str(skillbook_path) in record.getMessage() and "not valid JSON" in record.getMessage()
    [reload_span] = [s for s in capfire.exporter.exported_spans_as_dict() if s["name"] == "skillbook.reload"]
    assert [event["name"] for event in reload_span["events"]] == ["exception"]


def test_server_writes_nothing_beside_the_file_and_follows_new_skills(client, skillbook, skillbook_path):
    skillbook.add_skill(
        "context",
        "Helm upgrades fail when a CRD changed between chart versions.",
        ["helm", "crd"],
        "Apply the new CRDs before helm upgrade.",
    )
    skillbook.save_to_file(skillbook_path)
    files = {path.name: path.read_bytes() for path in skillbook_path.parent.iterdir()}

    [match] = client.get("/memory/skills", params={"task": "helm upgrade fails after the chart changed its CRD"}).json()

    assert match["id"] == "context-00009"
    assert {path.name: path.read_bytes() for path in skillbook_path.parent.iterdir()} == files


def test_server_uses_the_match_vectors_stored_in_the_sidecar(skillbook, skillbook_path):
    from fastapi.testclient import TestClient
    from matching.fixture_skills import CountingEmbedder

    from ace.retrieval import SkillMatcher, default_embedder
    from ace.server import create_app

    SkillMatcher(skillbook).refresh()  # a writer that matched stores the vectors with its next save
    skillbook.save_to_file(skillbook_path)
    embedder = CountingEmbedder(default_embedder())

    client = TestClient(create_app(skillbook_path, embedder=embedder), base_url="http://localhost")
    client.get("/memory/skills", params={"task": "kubectl logs is empty"})

    assert embedder.calls == [["kubectl logs is empty"]]


class FlakyEmbedder:
    """The default embedder, except that it fails while `down` is set."""

    def __init__(self) -> None:
        from ace.retrieval import default_embedder

        self.inner = default_embedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.down = False

    def embed(self, texts):
        if self.down:
            raise ConnectionError("embedding service unreachable")
        return self.inner.embed(texts)


def test_a_reload_that_failed_only_on_embedding_is_retried_without_a_new_save(skillbook, skillbook_path):
    from fastapi.testclient import TestClient

    from ace.server import create_app

    embedder = FlakyEmbedder()
    client = TestClient(create_app(skillbook_path, embedder=embedder), base_url="http://localhost")
    skillbook.add_skill(
        "context",
        "Helm upgrades fail when a CRD changed between chart versions.",
        ["helm", "crd"],
        "Apply the new CRDs before helm upgrade.",
    )
    skillbook.save_to_file(skillbook_path)

    embedder.down = True
    assert "X-Skillbook-Stale" in client.get("/memory/skills").headers
    embedder.down = False
    recovered = client.get("/memory/skills")

    assert "X-Skillbook-Stale" not in recovered.headers
    assert len(ids(recovered)) == 9


def test_stale_header_clears_when_the_original_file_is_moved_back_unchanged(client, skillbook_path):
    before = client.get("/memory/skills")
    backup = skillbook_path.with_name("backup.json")
    skillbook_path.rename(backup)
    skillbook_path.write_text('{"schema_version": "2", "skills": {')
    assert "X-Skillbook-Stale" in client.get("/memory/skills").headers

    backup.replace(skillbook_path)  # same inode, mtime and size as the state being served
    after = client.get("/memory/skills")

    assert "X-Skillbook-Stale" not in after.headers
    assert after.content == before.content


def test_stale_header_clears_when_the_served_content_is_written_back(client, skillbook_path):
    served = skillbook_path.read_bytes()
    skillbook_path.write_text('{"schema_version": "2", "skills": {')
    assert "X-Skillbook-Stale" in client.get("/memory/skills").headers

    skillbook_path.write_bytes(served)

    assert "X-Skillbook-Stale" not in client.get("/memory/skills").headers


def test_stale_header_is_one_short_line_however_long_the_bad_value(client, skillbook, skillbook_path):
    document = skillbook.to_dict()
    document["skills"]["context-00001"]["keywords"] = "x\n" * 50_000
    skillbook_path.write_text(json.dumps(document))

    stale = client.get("/memory/skills").headers["X-Skillbook-Stale"]

    assert stale.startswith("SkillbookFormatError: ") and "keywords" in stale
    assert len(stale) <= 300 and "\n" not in stale
