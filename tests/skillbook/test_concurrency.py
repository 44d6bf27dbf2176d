"""Concurrent writers: threads sharing a Skillbook, processes sharing a file."""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

import pytest

from ace.skillbook import Skillbook

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to start processes quickly")


def test_threads_adding_and_tagging_lose_no_update() -> None:
    book = Skillbook()
    seed = book.add_skill("harness", "shared", ["k"])
    barrier = threading.Barrier(8)

    def work(worker: int) -> None:
        barrier.wait()
        for number in range(40):
            book.add_skill("context", f"issue {worker}-{number}", ["k"], "insight")
            book.tag_skill(seed.id, 1)
            book.mark_used([seed.id])

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = [s.id for s in book.skills() if s.section == "context"]
    assert len(ids) == len(set(ids)) == 320
    assert (book.get_skill(seed.id).helpful_count, book.get_skill(seed.id).used_count) == (320, 320)


def _add_under_lock(path: Path, worker: int, count: int) -> None:
    for number in range(count):
        with Skillbook.locked(path) as book:
            book.add_skill("context", f"issue {worker}-{number}", ["k"], "insight")


@needs_fork
def test_two_processes_read_modify_write_under_lock_lose_no_skill(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_add_under_lock, args=(path, w, 15)) for w in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [w.exitcode for w in workers] == [0, 0]
    issues = {s.issue for s in Skillbook.load_from_file(path).skills()}
    assert issues == {f"issue {w}-{n}" for w in range(2) for n in range(15)}


def _save_repeatedly(path: Path, tag: str, times: int) -> None:
    book = Skillbook()
    for number in range(200):
        book.add_skill("harness", f"{tag} {number}", ["k"])
    for _ in range(times):
        book.save_to_file(path)


@needs_fork
def test_two_processes_saving_one_path_never_produce_a_mixed_file(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    _save_repeatedly(path, "a", 1)
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_save_repeatedly, args=(path, tag, 25)) for tag in "ab"]
    for writer in writers:
        writer.start()
    tags_seen = []
    while any(writer.is_alive() for writer in writers):
        tags_seen.append({s.issue.split()[0] for s in Skillbook.load_from_file(path).skills()})
    for writer in writers:
        writer.join()
    assert [w.exitcode for w in writers] == [0, 0]
    assert tags_seen, "no read overlapped the writers; the check below would prove nothing"
    assert all(tags in ({"a"}, {"b"}) for tags in tags_seen)


def test_locked_does_not_save_when_the_block_fails(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    with pytest.raises(RuntimeError):
        with Skillbook.locked(path) as book:
            book.add_skill("harness", "never saved", ["k"])
            raise RuntimeError("abort")
    assert not path.exists()
