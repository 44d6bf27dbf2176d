"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from data_files import unpack, unpack_recorded

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def recorded_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the four recorded tau2 airline runs as plain JSON (`data_files.RECORDED_RUNS`).

    Tests may read these files; a test that changes one copies it into its own folder first.
    """
    return unpack_recorded(tmp_path_factory.mktemp("recorded"))


@pytest.fixture(scope="session")
def v020_tasks_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The airline task set v0.2.0 (the one the recorded runs were graded with) as a plain JSON file."""
    return unpack("tau2/airline_v0.2.0/tasks.json", tmp_path_factory.mktemp("tasks-v0.2.0"))
