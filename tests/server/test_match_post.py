"""POST /memory/skills/match: the GET match, with the task in a JSON body, its length limits enforced."""

from __future__ import annotations

import json

import pytest
from matching.fixture_skills import CRASHLOOP

from ace.server import MAX_BODY_BYTES, MAX_LIMIT, MAX_TASK_CHARS

POD_TASK = "The worker pod is in CrashLoopBackOff and kubectl logs prints nothing. Find out why it crashes."


def test_post_answers_exactly_as_get_for_the_same_task_and_limit(client):
    get = client.get("/memory/skills", params={"task": POD_TASK, "limit": 2})
    post = client.post("/memory/skills/match", json={"task": POD_TASK, "limit": 2})

    assert (post.status_code, post.content) == (200, get.content)
    assert [m["id"] for m in post.json()] == [CRASHLOOP]


def test_post_matches_a_task_of_200k_characters_too_long_for_a_url(client):
    task = (POD_TASK + " ") * (200_000 // (len(POD_TASK) + 1) + 1)
    assert 200_000 <= len(task) <= MAX_TASK_CHARS

    response = client.post("/memory/skills/match", json={"task": task})

    assert response.status_code == 200
    assert [m["id"] for m in response.json()] == [CRASHLOOP]


def test_task_over_the_character_limit_is_422_naming_the_limit_without_echoing_the_task(client):
    response = client.post("/memory/skills/match", json={"task": "a" * (MAX_TASK_CHARS + 1)})

    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "task"] and f"{MAX_TASK_CHARS}" in error["msg"]
    assert len(response.content) < 1_000


def test_body_declared_over_the_byte_limit_is_413_before_it_is_read(client):
    body = json.dumps({"task": "a" * MAX_BODY_BYTES}).encode()

    response = client.post("/memory/skills/match", content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 413
    assert f"{MAX_BODY_BYTES:,}" in response.json()["detail"]


def test_chunked_body_over_the_byte_limit_is_413(client):
    def chunks():
        yield b'{"task": "'
        for _ in range(MAX_BODY_BYTES // 65_536 + 1):
            yield b"a" * 65_536
        yield b'"}'

    response = client.post("/memory/skills/match", content=chunks(), headers={"Content-Type": "application/json"})

    assert response.status_code == 413


def test_lone_surrogate_escape_in_the_task_is_422_saying_unicode(client):
    response = client.post(
        "/memory/skills/match", content=b'{"task": "pods \\ud800 crash"}', headers={"Content-Type": "application/json"}
    )

    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "task"] and "not valid Unicode" in error["msg"] and "\\ud800" in error["msg"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"task": "   "}, "task"),
        ({"task": ""}, "task"),
        ({}, "task"),
        ({"task": POD_TASK, "limit": 0}, "limit"),
        ({"task": POD_TASK, "limit": MAX_LIMIT + 1}, "limit"),
        ({"task": POD_TASK, "limit": "3"}, "limit"),
        ({"task": POD_TASK, "tsak": "typo"}, "tsak"),
    ],
)
def test_invalid_body_is_422_naming_the_field(client, body, field):
    response = client.post("/memory/skills/match", json=body)

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", field]
