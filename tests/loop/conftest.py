"""Fixtures for the loop tests: real roles driven by the FunctionModels of `loop_roles`."""

from __future__ import annotations

from typing import Any

import pytest
from loop_roles import BagOfWordsEmbedder, agent_model, reflector_model, skill_manager_model

from ace.roles import Agent, Reflector, SkillManager


@pytest.fixture
def embedder() -> BagOfWordsEmbedder:
    return BagOfWordsEmbedder()


@pytest.fixture
def roles(embedder: BagOfWordsEmbedder) -> dict[str, Any]:
    return {
        "agent": Agent(agent_model()),
        "reflector": Reflector(reflector_model()),
        "skill_manager": SkillManager(skill_manager_model(), embedder=embedder),
    }
