"""A clone of the repository placed anywhere, with nothing beside it, has everything its tests need.

The clone test works on committed files (`git clone` of this checkout's HEAD), as CI does.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from data_files import DATA_DIR, RECORDED_RUNS, unpack, unpack_recorded

REPO = Path(__file__).resolve().parents[1]

OUTSIDE_THE_REPOSITORY = re.compile(r"\.\./shared|ACE_SHARED_DIR|shared/(?:tau2|fixtures|research)/")
"""References to the folder that used to lie beside the repository."""

SCANNED_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".sh", ".yml", ".yaml", ".json", ".jinja", ""}


def _tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / name for name in listed.decode().split("\0") if name]


needs_git = pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")


@needs_git
def test_no_tracked_file_reads_a_folder_beside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        if path.suffix not in SCANNED_SUFFIXES or not path.is_file() or path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE_THE_REPOSITORY.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


@needs_git
def test_a_clone_in_an_empty_folder_collects_every_test_without_errors(tmp_path: Path) -> None:
    clone = tmp_path / "empty" / "ace"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True)
    environment = {**os.environ, "PYTHONPATH": str(clone)}
    environment.pop("ACE_SHARED_DIR", None)

    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=clone,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert re.search(r"^\d+ tests collected", collected.stdout, re.MULTILINE), collected.stdout[-500:]
    assert sorted(p.name for p in (tmp_path / "empty").iterdir()) == ["ace"]


def test_every_recorded_run_unpacks_to_a_tau2_results_document(tmp_path: Path) -> None:
    folder = unpack_recorded(tmp_path)

    assert sorted(p.name for p in folder.iterdir()) == sorted(RECORDED_RUNS)
    for name in RECORDED_RUNS:
        document = json.loads((folder / name).read_text())
        assert document["simulations"] and document["tasks"], name


def test_the_task_set_v020_unpacks(tmp_path: Path) -> None:
    tasks = json.loads(unpack("tau2/airline_v0.2.0/tasks.json", tmp_path).read_text())

    assert len(tasks) == 50


def test_the_data_holds_no_provider_api_key() -> None:
    for path in sorted(DATA_DIR.rglob("*")):
        if not path.is_file() or path.suffix == ".npz":
            continue
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        text = raw.decode("utf-8", errors="replace")
        keys = re.findall(r'"api_key"\s*:\s*"([^"]*)"', text)
        assert set(keys) <= {"<redacted>"}, path
