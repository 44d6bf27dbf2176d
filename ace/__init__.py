"""ace: agents that learn from experience.

Agents run tasks; a Reflector analyses each trace; a SkillManager curates a skillbook of learned
skills; the next run gets the skills that apply. The whole loop is a pipeline of composable steps.

The names below are imported on first use, so `import ace` (and the `ace` command) loads no LLM
client; type checkers see them through the `TYPE_CHECKING` imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.deduplication import DeduplicationConfig, DeduplicationManager
    from ace.errors import AceError, UsageError
    from ace.retrieval import SkillMatcher, retrieve_top_k
    from ace.roles import (
        Agent,
        AgentOutput,
        InjectedSkills,
        RecursiveReflector,
        Reflector,
        ReflectorOutput,
        SkillManager,
        SkillManagerOutput,
    )
    from ace.runners import ACE, TraceAnalyser
    from ace.skillbook import InsightSource, Skill, Skillbook, TraceRef, UpdateBatch, UpdateOperation
    from ace.steps import ACEStepContext
    from ace.traces import Sample

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "AceError",
    "UsageError",
    "Skillbook",
    "Skill",
    "InsightSource",
    "TraceRef",
    "UpdateOperation",
    "UpdateBatch",
    "Agent",
    "Reflector",
    "RecursiveReflector",
    "SkillManager",
    "AgentOutput",
    "ReflectorOutput",
    "SkillManagerOutput",
    "InjectedSkills",
    "SkillMatcher",
    "retrieve_top_k",
    "DeduplicationConfig",
    "DeduplicationManager",
    "ACEStepContext",
    "Sample",
    "ACE",
    "TraceAnalyser",
]

_EXPORTS: dict[str, str] = {
    "AceError": "ace.errors",
    "UsageError": "ace.errors",
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
    "Sample": "ace.traces",
    "ACE": "ace.runners",
    "TraceAnalyser": "ace.runners",
}
"""Where each lazily imported name of `__all__` lives (a test checks that the two agree)."""


__getattr__ = lazy_getattr(__name__, _EXPORTS)
