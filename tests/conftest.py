"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only `shared/` folder laid beside the repository (tau2 data, fixtures).

    Override with the ACE_SHARED_DIR environment variable.
    """
    path = Path(os.environ.get("ACE_SHARED_DIR", REPO_ROOT.parent / "shared"))
    if not (path / "tau2").is_dir():
        pytest.fail(f"shared data not found at {path}; set ACE_SHARED_DIR to the shared/ folder")
    return path
