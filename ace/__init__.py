"""ace: agents that learn from experience.

Agents run tasks; a Reflector analyses each trace; a SkillManager curates a skillbook of learned
skills; the next run gets the skills that apply. The whole loop is a pipeline of composable steps.

The names below are imported on first use, so `import ace` (and the `ace` command) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Skillbook": "ace.skillbook",
    "Skill": "ace.skillbook",
    "InsightSource": "ace.skillbook",
    "TraceRef": "ace.skillbook",
    "UpdateOperation": "ace.skillbook",
    "UpdateBatch": "ace.skillbook",
    "Agent": "ace.roles",
    "Reflector": "ace.roles",
    "RecursiveReflector": "ace.roles",
    "SkillManager": "ace.roles",
    "AgentOutput": "ace.roles",
    "ReflectorOutput": "ace.roles",
    "SkillManagerOutput": "ace.roles",
    "InjectedSkills": "ace.roles",
    "SkillMatcher": "ace.retrieval",
    "retrieve_top_k": "ace.retrieval",
    "DeduplicationConfig": "ace.deduplication",
    "DeduplicationManager": "ace.deduplication",
    "ACEStepContext": "ace.steps",
    "Sample": "ace.steps",
    "ACE": "ace.runners",
    "TraceAnalyser": "ace.runners",
}

__all__ = ["__version__", *_EXPORTS]

def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ace' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
