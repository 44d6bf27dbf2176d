"""A writer killed with SIGKILL at random points never leaves a broken or mixed skillbook."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from ace.atomic_write import write_atomic
from ace.skillbook import Skillbook

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to start writers quickly")

SKILLS = 400
DIMENSION = 64


def _version(tag: str, value: float) -> Skillbook:
    """A skillbook whose every issue says `tag` and whose every vector is filled with `value`."""
    book = Skillbook()
    for number in range(SKILLS):
        book.add_skill("context", f"{tag} issue {number}", ["k"], f"{tag} insight")
    book.set_embeddings({s.id: np.full(DIMENSION, value) for s in book.skills()}, model="m")
    return book


def _save_forever(path: Path, books: list[Skillbook], progress) -> None:
    while True:
        for book in books:
            book.save_to_file(path)
            progress.send(1)


def _loaded_version(path: Path) -> str:
    """'old' or 'new' (every skill and vector agree), or raises if the files are broken or mixed."""
    loaded = Skillbook.load_from_file(path)
    tags = {s.issue.split()[0] for s in loaded.skills()}
    assert len(loaded) == SKILLS and len(tags) == 1, tags
    tag = tags.pop()
    expected = {"old": 1.0, "new": 2.0}[tag]
    for skill in loaded.skills():
        assert skill.embedding is None or np.all(skill.embedding == expected), skill.id
    return tag


def test_writer_killed_mid_save_leaves_old_or_new_complete_file(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    old, new = _version("old", 1.0), _version("new", 2.0)
    started = time.perf_counter()
    old.save_to_file(path)
    save_seconds = time.perf_counter() - started
    context = multiprocessing.get_context("fork")
    rng = random.Random(1234)
    seen = set()
    for _ in range(12):
        receiver, sender = context.Pipe(duplex=False)
        writer = context.Process(target=_save_forever, args=(path, [new, old], sender), daemon=True)
        writer.start()
        for _ in range(rng.randint(1, 2)):
            receiver.recv()
        # Spread the kill over a whole save: serialising, writing either file, renaming.
        receiver.poll(rng.uniform(0, save_seconds))
        os.kill(writer.pid, signal.SIGKILL)
        writer.join()
        seen.add(_loaded_version(path))
    assert seen <= {"old", "new"}


def test_a_write_that_fails_midway_leaves_the_previous_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"previous")

    def fail_after_some_bytes(handle) -> None:
        handle.write(b"half of the new con")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, fail_after_some_bytes)

    assert path.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]


def test_a_failed_save_leaves_the_previous_skillbook_loadable(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    before = Skillbook()
    before.add_skill("harness", "previous issue", ["k"])
    before.save_to_file(path)
    # A folder where the sidecar must go makes the save fail at its first rename.
    sidecar = tmp_path / "sb.embeddings.npz"
    sidecar.unlink()
    sidecar.mkdir()
    after = Skillbook()
    after.add_skill("harness", "new issue", ["k"])

    with pytest.raises(OSError):
        after.save_to_file(path)

    sidecar.rmdir()
    assert [s.issue for s in Skillbook.load_from_file(path).skills()] == ["previous issue"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sb.json"]
