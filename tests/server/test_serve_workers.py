"""`ace serve --workers N`: a pool of real processes over one skillbook file, each following it,
configured through a private options file that is gone when the pool stops."""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from matching.fixture_skills import ROOM_BOOKING_TASK, add_room_booking_skill, build_acceptance_skillbook

from ace.cli import main
from ace.cli._serve_app import OPTIONS_FILE_ENV
from ace.skillbook import Skillbook

from .serve_process import ServeProcess, command_line_of, environment_of

REQUESTS = 24
"""Requests asked on fresh connections after a change: each worker gets some of them."""


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ServeProcess]]:
    path = tmp_path_factory.mktemp("pool") / "skillbook.json"
    build_acceptance_skillbook().save_to_file(path)
    server = ServeProcess(path, "--workers", "2")
    try:
        yield path, server
    finally:
        server.stop()


def test_every_worker_of_the_pool_answers_a_change_of_the_file_at_once(pool: tuple[Path, ServeProcess]) -> None:
    path, server = pool
    assert len(server.workers()) == 2
    assert all(server.match_ids(ROOM_BOOKING_TASK) == [] for _ in range(REQUESTS))

    with Skillbook.locked(path) as skillbook:
        added = add_room_booking_skill(skillbook)

    assert [server.match_ids(ROOM_BOOKING_TASK) for _ in range(REQUESTS)] == [[added.id]] * REQUESTS


def test_workers_read_their_options_from_a_file_only_the_user_can_read(pool: tuple[Path, ServeProcess]) -> None:
    path, server = pool
    workers = server.workers()
    [options] = {environment_of(pid)[OPTIONS_FILE_ENV] for pid in workers}

    assert stat.S_IMODE(Path(options).stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(options).parent.stat().st_mode) == 0o700
    assert all(str(path) not in command_line_of(pid) for pid in workers)


def test_the_options_file_is_deleted_when_the_pool_stops(tmp_path: Path) -> None:
    path = tmp_path / "skillbook.json"
    build_acceptance_skillbook().save_to_file(path)
    server = ServeProcess(path, "--workers", "2")
    options = Path(environment_of(server.workers()[0])[OPTIONS_FILE_ENV])

    output = server.stop()

    assert not options.exists() and not options.parent.exists()
    assert "2 worker processes" in output


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--workers", "0"], "--workers must be within 1..64, got 0"),
        (["--task-cache", "-1"], "--task-cache must be 0 (no cache) or more task vectors, got -1"),
    ],
)
def test_bad_pool_options_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    path = tmp_path / "skillbook.json"
    build_acceptance_skillbook().save_to_file(path)

    assert main(["serve", str(path), *flags]) == 2

    assert capsys.readouterr().err == f"ace: error: {message}\n"


def test_a_malformed_file_stops_a_pool_before_any_worker_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"schema_version": "2", "skills": {')

    assert main(["serve", str(path), "--workers", "2"]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("ace: error: ") and str(path) in line


def test_the_workers_of_a_pool_with_edits_give_every_form_one_token(tmp_path: Path) -> None:
    path = tmp_path / "skillbook.json"
    build_acceptance_skillbook().save_to_file(path)
    server = ServeProcess(path, "--workers", "2", "--allow-edits")
    try:
        pages = [httpx.get(f"{server.url}/ui/skills/context-00001", timeout=60) for _ in range(REQUESTS)]
    finally:
        server.stop()

    tokens = {token for page in pages for token in re.findall(r'name="token" value="([^"]+)"', page.text)}
    assert all(page.status_code == 200 for page in pages) and len(tokens) == 1
