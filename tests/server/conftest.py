"""Fixtures for the skills API tests: the matching acceptance skillbook saved to a file, and a client."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from matching.fixture_skills import build_acceptance_skillbook

from ace.server import create_app
from ace.skillbook import Skillbook


@pytest.fixture
def skillbook() -> Skillbook:
    return build_acceptance_skillbook()


@pytest.fixture
def skillbook_path(tmp_path: Path, skillbook: Skillbook) -> Path:
    path = tmp_path / "skillbook.json"
    skillbook.save_to_file(path)
    return path


@pytest.fixture
def client(skillbook_path: Path) -> TestClient:
    return TestClient(create_app(skillbook_path), base_url="http://localhost")
