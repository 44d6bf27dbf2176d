"""Writers killed with SIGKILL leave temp files; the next writer of the same path removes them, and
never the temp file of a writer that is still alive."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
from pathlib import Path

import numpy as np
import pytest

from ace.atomic_write import write_atomic
from ace.skillbook import Skillbook

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to start writers quickly")

CONTEXT = multiprocessing.get_context("fork") if hasattr(os, "fork") else None


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _book(skills: int = 200) -> Skillbook:
    book = Skillbook()
    for number in range(skills):
        book.add_skill("context", f"issue {number}", ["k"], "insight")
    book.set_embeddings({s.id: np.ones(64) for s in book.skills()}, model="m")
    return book


def _write_and_hang(path: Path, started) -> None:
    def write(handle) -> None:
        handle.write(b"half of a file")
        handle.flush()
        started.send("in write")
        signal.pause()  # until killed

    write_atomic(path, write)


def _save_forever(path: Path, book: Skillbook, started) -> None:
    while True:
        started.send("save")
        book.save_to_file(path)


def _kill(process) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.join()


def test_temp_files_of_killed_writers_are_removed_by_the_next_save(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    book = _book()
    book.save_to_file(path)
    rng = random.Random(7)
    most_left = 0
    for round_number in range(30):
        receiver, sender = CONTEXT.Pipe(duplex=False)
        if round_number % 2:  # killed at a random point of a save loop
            writer = CONTEXT.Process(target=_save_forever, args=(path, book, sender), daemon=True)
            writer.start()
            for _ in range(rng.randint(1, 4)):
                receiver.recv()
        else:  # killed for certain in the middle of writing its temp file
            target = path if round_number % 4 else path.with_name("sb.embeddings.npz")
            writer = CONTEXT.Process(target=_write_and_hang, args=(target, sender), daemon=True)
            writer.start()
            receiver.recv()
        _kill(writer)
        # Each writer cleaned up after the ones killed before it: leftovers never pile up.
        most_left = max(most_left, len(_temps(tmp_path)))
    assert most_left <= 2
    book.save_to_file(path)
    assert _temps(tmp_path) == []
    assert len(Skillbook.load_from_file(path)) == 200


def _write_slowly(path: Path, ready, go) -> None:
    def write(handle) -> None:
        handle.write(b"live writer ")
        handle.flush()
        ready.send("temp file written")
        go.recv()
        handle.write(b"done")

    write_atomic(path, write)


def test_a_live_writers_temp_file_is_not_removed(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    ready_receiver, ready_sender = CONTEXT.Pipe(duplex=False)
    go_receiver, go_sender = CONTEXT.Pipe(duplex=False)
    writer = CONTEXT.Process(target=_write_slowly, args=(path, ready_sender, go_receiver), daemon=True)
    writer.start()
    ready_receiver.recv()
    live_temp = _temps(tmp_path)
    assert len(live_temp) == 1

    write_atomic(path, lambda handle: handle.write(b"other writer"))

    assert _temps(tmp_path) == live_temp
    go_sender.send("go")
    writer.join()
    assert writer.exitcode == 0
    assert path.read_bytes() == b"live writer done"
    assert _temps(tmp_path) == []


def test_only_dead_temp_files_of_the_same_path_are_removed(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    dead = tmp_path / f".sb.json.{'a' * 32}.tmp"  # as an older version's killed writer left it
    others = [
        tmp_path / f".sb.json.backup.{'b' * 32}.tmp",
        tmp_path / f".sb.json.x.{'c' * 32}.tmp",
        tmp_path / f".other.json.{'d' * 32}.tmp",
        tmp_path / "sb.json.tmp",
    ]
    for file in (dead, *others):
        file.write_bytes(b"left over")

    write_atomic(path, lambda handle: handle.write(b"new"))

    assert not dead.exists()
    assert all(file.exists() for file in others)
