"""A skillbook reached through a symlink and through its real path is one file: one lock, one
sidecar, no lost updates."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

from ace.skillbook import Skillbook

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to start processes quickly")

PROCESSES = 8
UPDATES = 12


def _tag_repeatedly(path: Path, updates: int) -> None:
    for _ in range(updates):
        with Skillbook.locked(path) as book:
            book.tag_skill("context-00001", 1)


def test_locked_updates_through_a_link_and_the_real_path_lose_nothing(tmp_path: Path) -> None:
    real = tmp_path / "data" / "sb.json"
    real.parent.mkdir()
    book = Skillbook()
    book.add_skill("context", "issue", ["k"], "insight")
    book.save_to_file(real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_tag_repeatedly, args=(link if number % 2 else real, UPDATES))
        for number in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert [worker.exitcode for worker in workers] == [0] * PROCESSES
    assert Skillbook.load_from_file(real).get_skill("context-00001").helpful_count == PROCESSES * UPDATES
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "link.json"]


def test_a_link_and_its_target_share_one_sidecar(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    link = tmp_path / "link.json"
    book = Skillbook()
    book.add_skill("harness", "issue", ["k"])
    book.set_embeddings({"harness-00001": np.ones(4)}, model="m")
    book.save_to_file(real)
    link.symlink_to(real)

    book.save_to_file(link)

    assert not (tmp_path / "link.embeddings.npz").exists()
    assert Skillbook.load_from_file(link).get_skill("harness-00001").embedding is not None
