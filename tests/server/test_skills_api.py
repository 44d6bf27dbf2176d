"""GET /memory/skills (catalog and ?task= matching) and GET /memory/skills/{id}."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from fastapi.testclient import TestClient
from matching.fixture_skills import CRASHLOOP, HELM_PENDING, LOCKFILES

from ace.retrieval import default_embedder
from ace.retrieval.rerankers import RerankCandidate, RerankError, match_text
from ace.server import MAX_LIMIT, create_app

POD_TASK = "The worker pod is in CrashLoopBackOff and kubectl logs prints nothing. Find out why it crashes."


class AlwaysApplies:
    name = "always"

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        return [0.9] * len(candidates)


def test_without_task_returns_the_plain_listing_of_active_skills(client, skillbook):
    response = client.get("/memory/skills")

    assert response.status_code == 200
    assert response.json() == [
        {"id": s.id, "section": s.section, "keywords": list(s.keywords), "issue": s.issue} for s in skillbook.skills()
    ]
    assert len(response.json()) == 8


def test_catalog_is_byte_identical_across_calls(client):
    assert len({client.get("/memory/skills").content for _ in range(5)}) == 1


def test_task_returns_the_matching_skill_with_score_and_matched_on(client):
    response = client.get("/memory/skills", params={"task": POD_TASK})

    assert response.status_code == 200
    [match] = response.json()
    assert list(match) == ["id", "score", "matched_on", "section", "keywords", "issue"]
    assert (match["id"], match["matched_on"], match["section"]) == (CRASHLOOP, "issue", "context")
    assert 0.5 <= match["score"] <= 1.0


def test_task_nothing_applies_to_returns_200_and_empty_list(client):
    response = client.get("/memory/skills", params={"task": "Write a haiku about autumn leaves."})

    assert (response.status_code, response.json()) == (200, [])


def test_limit_defaults_to_three(skillbook_path):
    client = TestClient(create_app(skillbook_path, reranker=AlwaysApplies()), base_url="http://localhost")

    assert len(client.get("/memory/skills", params={"task": "anything"}).json()) == 3
    assert len(client.get("/memory/skills", params={"task": "anything", "limit": 5}).json()) == 5


@pytest.mark.parametrize("limit", [0, MAX_LIMIT + 1, "three"])
def test_out_of_bounds_limit_is_rejected_with_422_naming_the_parameter(client, limit):
    response = client.get("/memory/skills", params={"task": "anything", "limit": limit})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "limit"]


def test_blank_task_is_rejected_with_422(client):
    response = client.get("/memory/skills", params={"task": "   "})

    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["query", "task"] and "blank" in error["msg"]


def test_skill_by_id_has_insight_counters_and_occurrences(client, skillbook):
    response = client.get(f"/memory/skills/{LOCKFILES}")

    assert response.status_code == 200
    assert response.json() == skillbook.get_skill(LOCKFILES).to_dict()
    assert {"insight", "used_count", "helpful_count", "occurrences"} <= set(response.json())


@pytest.mark.parametrize("skill_id", ["context-09999", HELM_PENDING])
def test_unknown_or_inactive_skill_id_is_404(client, skill_id):
    response = client.get(f"/memory/skills/{skill_id}")

    assert response.status_code == 404
    assert skill_id in response.json()["detail"]


class BrokenReranker:
    name = "broken"

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        raise RerankError("rerank service unreachable")


class UnreachableForTasks:
    """The offline embedder for skill texts; any other text fails like a network embedder would."""

    def __init__(self, skill_texts: set[str]) -> None:
        self.inner = default_embedder()
        self.name, self.dim, self.skill_texts = self.inner.name, self.inner.dim, skill_texts

    def embed(self, texts: Sequence[str]):
        if not set(texts) <= self.skill_texts:
            raise ConnectionError("embedding service unreachable")
        return self.inner.embed(texts)


def test_reranker_failure_is_503_naming_the_cause(skillbook_path):
    client = TestClient(create_app(skillbook_path, reranker=BrokenReranker()), base_url="http://localhost")

    response = client.get("/memory/skills", params={"task": POD_TASK})

    assert response.status_code == 503
    assert "rerank service unreachable" in response.json()["detail"]


def test_task_embedding_failure_is_503_naming_the_cause(skillbook, skillbook_path):
    texts = {match_text(s.issue, s.keywords) for s in skillbook.skills()}
    client = TestClient(create_app(skillbook_path, embedder=UnreachableForTasks(texts)), base_url="http://localhost")

    response = client.get("/memory/skills", params={"task": POD_TASK})

    assert response.status_code == 503
    assert "embedding service unreachable" in response.json()["detail"]
