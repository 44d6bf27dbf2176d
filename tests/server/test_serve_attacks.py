"""`ace serve` under attack (issue 23, class 10): each test is named for the attack it stops.

Slow bodies are sent over raw sockets to a real uvicorn server (in a thread of this process, on a
free port of 127.0.0.1): a stalled client must be answered 408 within the body deadline, the
bytes it sent must be released, and all bodies held at once stay within the shared budget.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from ace.cli import main
from ace.server import LOOPBACK_HOSTS, allowed_host_patterns, create_app

ANSWER_TIMEOUT_S = 60.0
"""Bound on waiting for an answer the server must give (it comes within a second or two)."""


@pytest.fixture
def live(skillbook_path: Path) -> Iterator[tuple[int, FastAPI]]:
    """The API with a 1 s body deadline and a 1 MiB budget, served by uvicorn; (port, app)."""
    app = create_app(skillbook_path, body_timeout_s=1.0, max_buffered_body_bytes=2**20)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    started = threading.Event()
    while not server.started and thread.is_alive():
        started.wait(0.01)
    assert server.started, "uvicorn did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    yield port, app
    server.should_exit = True
    thread.join(timeout=ANSWER_TIMEOUT_S)


def post_head(port: int, length: int, host: str = "127.0.0.1") -> socket.socket:
    """A connection that has sent the head of `POST /memory/skills/match` with a body of `length` bytes."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=ANSWER_TIMEOUT_S)
    connection.sendall(
        f"POST /memory/skills/match HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n".encode()
    )
    return connection


def status_of(connection: socket.socket) -> int:
    """The status code of the answer on `connection` (read until the status line is complete)."""
    received = b""
    while b"\r\n" not in received:
        chunk = connection.recv(4096)
        if not chunk:
            break
        received += chunk
    return int(received.split(b" ", 2)[1])


def complete_post(port: int, body: bytes) -> int:
    with post_head(port, len(body)) as connection:
        connection.sendall(body)
        return status_of(connection)


def task_body(size: int) -> bytes:
    """A valid match request of about `size` bytes."""
    return json.dumps({"task": "pods crash " * (size // 11)}).encode()


def wait_until_held(app: FastAPI, size: int) -> None:
    """Wait until the server holds `size` bytes of request bodies (the stalled client's bytes arrived)."""
    arrived = threading.Event()
    for _ in range(int(ANSWER_TIMEOUT_S / 0.01)):
        if app.state.body_budget.held >= size:
            return
        arrived.wait(0.01)
    raise AssertionError(f"the server holds {app.state.body_budget.held} bytes, not {size}")


def test_a_stalled_body_is_answered_408_and_its_bytes_are_released(live: tuple[int, FastAPI]) -> None:
    port, app = live
    with post_head(port, 900_000) as stalled:
        stalled.sendall(b"x" * 800_000)  # then nothing: the client stalls mid-body
        wait_until_held(app, 800_000)
        assert complete_post(port, task_body(400_000)) == 503  # 800 KB held + 400 KB > the 1 MiB budget

        assert status_of(stalled) == 408

    assert app.state.body_budget.held == 0
    assert complete_post(port, task_body(400_000)) == 200  # the stalled bytes were released


def test_a_request_for_another_host_name_is_refused(skillbook_path: Path) -> None:
    client = TestClient(create_app(skillbook_path), base_url="http://localhost:8765")

    assert client.get("/memory/skills", headers={"Host": "rebound.attacker.example:8765"}).status_code == 400
    assert (
        client.post(
            "/memory/skills/match", headers={"Host": "rebound.attacker.example"}, json={"task": "pods crash"}
        ).status_code
        == 400
    )
    for host in ("localhost:8765", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST"):
        assert client.get("/memory/skills", headers={"Host": host}).status_code == 200, host


def test_a_host_name_added_on_the_command_line_is_answered(skillbook_path: Path) -> None:
    client = TestClient(
        create_app(skillbook_path, allowed_hosts=allowed_host_patterns(["skills.internal"])),
        base_url="http://localhost",
    )

    assert client.get("/memory/skills", headers={"Host": "skills.internal:8765"}).status_code == 200
    assert client.get("/memory/skills", headers={"Host": "other.internal"}).status_code == 400


def test_allowed_host_patterns_hold_the_loopback_names_the_bound_address_and_the_extras() -> None:
    assert allowed_host_patterns() == list(LOOPBACK_HOSTS)
    assert allowed_host_patterns(bound="0.0.0.0") == list(LOOPBACK_HOSTS)
    assert allowed_host_patterns(["Skills.Example"], bound="fe80::1") == [
        *LOOPBACK_HOSTS,
        "[fe80::1]",
        "skills.example",
    ]


def test_serve_refuses_a_body_timeout_out_of_range(skillbook_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", str(skillbook_path), "--body-timeout", "0"]) == 2
    assert "--body-timeout must be more than 0" in capsys.readouterr().err
