"""The task vector cache and micro-batching change how often tasks are embedded, never an answer:
a server with both answers every request with the bytes of a server with neither, whatever the
tasks, their repeats, the requests' concurrency and the skillbook's changes in between."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matching.fixture_skills import HELM_ISSUE, RATE_LIMIT_ISSUE, ROOM_BOOKING_TASK, build_acceptance_skillbook

from ace.retrieval import default_embedder
from ace.server import create_app
from ace.skillbook import Skillbook

WORDS = sorted(set(re.findall(r"[a-z]{3,}", f"{HELM_ISSUE} {RATE_LIMIT_ISSUE} {ROOM_BOOKING_TASK}".lower())))

task_texts = st.one_of(
    st.sampled_from([HELM_ISSUE, RATE_LIMIT_ISSUE, ROOM_BOOKING_TASK]),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=14).map(" ".join),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(str.strip),
)
"""The skills' own issues, bags of their words, and any printable text."""

padding = st.sampled_from(["", " ", "\n", "  \t"])
"""Surrounding whitespace, which the matcher strips (so a padded repeat is a repeat)."""


@st.composite
def sessions(draw: st.DrawFn) -> list[tuple[list[str], bool]]:
    """Rounds of requests sent at once, drawn from a few texts (so texts repeat within and across
    rounds), each round followed or not by a change of the skillbook file."""
    pool = draw(st.lists(task_texts, min_size=1, max_size=5, unique=True))
    rounds = []
    for _ in range(draw(st.integers(1, 4))):
        size = draw(st.integers(1, 6))
        round_ = [draw(padding) + draw(st.sampled_from(pool)) + draw(padding) for _ in range(size)]
        rounds.append((round_, draw(st.booleans())))
    return rounds


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, TestClient, TestClient]]:
    """The skillbook file, a client of a server with neither cache nor batching, and one of a server
    with both (a cache of 3 tasks, so entries are evicted and embedded again)."""
    path = tmp_path_factory.mktemp("identity") / "skillbook.json"
    build_acceptance_skillbook().save_to_file(path)
    plain = create_app(path, task_cache_entries=0, batch_tasks=False)
    fast = create_app(path, task_cache_entries=3, batch_tasks=True)
    with (
        TestClient(plain, base_url="http://localhost") as plain_client,
        TestClient(fast, base_url="http://localhost") as fast_client,
    ):
        yield path, plain_client, fast_client


def _answer(client: TestClient, route: str, task: str) -> tuple[int, bytes]:
    if route == "GET":
        response = client.get("/memory/skills", params={"task": task, "limit": 5})
    else:
        response = client.post("/memory/skills/match", json={"task": task, "limit": 5})
    return response.status_code, response.content


def _concurrently(client: TestClient, requests: list[tuple[str, str]]) -> list[tuple[int, bytes]]:
    answers: list[tuple[int, bytes] | None] = [None] * len(requests)
    start = threading.Barrier(len(requests))

    def send(index: int, route: str, task: str) -> None:
        start.wait()
        answers[index] = _answer(client, route, task)

    threads = [threading.Thread(target=send, args=(i, *request)) for i, request in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert all(answer is not None for answer in answers)
    return [answer for answer in answers if answer is not None]


_changes = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(session=sessions())
def test_cached_and_batched_answers_are_the_bytes_of_the_plain_server(
    servers: tuple[Path, TestClient, TestClient], session: list[tuple[list[str], bool]]
) -> None:
    path, plain, fast = servers
    for tasks, then_change in session:
        requests = [("GET" if i % 2 == 0 else "POST", task) for i, task in enumerate(tasks)]

        fast_answers = _concurrently(fast, requests)

        assert fast_answers == [_answer(plain, route, task) for route, task in requests]
        assert all(status == 200 for status, _ in fast_answers)
        if then_change:
            # A skill whose issue is one of the tasks: the cached vector now meets a new index.
            with Skillbook.locked(path) as skillbook:
                skillbook.add_skill("context", f"{tasks[0].strip()} (change {next(_changes)})", ["changed"], "Do it.")


class CountingEmbedder:
    """The default MiniLM embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_a_repeated_task_is_embedded_once_and_answered_as_the_plain_server_answers(
    servers: tuple[Path, TestClient, TestClient],
) -> None:
    path, plain, _ = servers
    embedder = CountingEmbedder()
    client = TestClient(create_app(path, embedder=embedder), base_url="http://localhost")
    task = f"{ROOM_BOOKING_TASK} (embedded once)"

    answers = [_answer(client, "GET", task), _answer(client, "POST", f"  {task}\n"), _answer(client, "GET", task)]

    assert answers == [_answer(plain, "GET", task)] * 3
    assert embedder.texts.count(task) == 1
