"""The four roles of the learning loop, each a Protocol plus a pydantic-ai implementation.

`Agent` answers a task with the skills a `SkillSource` hands out (matched, all, or read on demand);
`Reflector` (one pass) and `RecursiveReflector` (code over the trace in a sandbox) analyse a trace;
`SkillManager` turns reflections into skillbook mutations through atomic tools. Prompts live in
`ace.roles.prompts`.

The names below are imported on first use, so a command line can read `SKILL_INJECTIONS` without
loading pydantic-ai; type checkers see them through the `TYPE_CHECKING` imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.roles.agent import Agent
    from ace.roles.injected_skills import InjectedSkills
    from ace.roles.injection import SKILL_INJECTIONS, SkillInjection
    from ace.roles.outputs import AgentOutput, ReflectorOutput, SkillManagerOutput
    from ace.roles.protocols import AgentLike, ReflectorLike, SessionCheck, SkillManagerLike
    from ace.roles.recursive_reflector import RecursiveReflector, RRDeps
    from ace.roles.reflector import Reflector
    from ace.roles.skill_manager import DEFAULT_HARMFUL_THRESHOLD, SkillManager, SkillManagerIncompleteError, SMDeps
    from ace.roles.skill_source import READ_SKILL_TOOL, SkillSource, UnknownSkillError
    from ace.traces.sample import Sample

__all__ = [
    "DEFAULT_HARMFUL_THRESHOLD",
    "READ_SKILL_TOOL",
    "SKILL_INJECTIONS",
    "Agent",
    "AgentLike",
    "AgentOutput",
    "InjectedSkills",
    "RRDeps",
    "RecursiveReflector",
    "Reflector",
    "ReflectorLike",
    "ReflectorOutput",
    "SMDeps",
    "Sample",
    "SkillInjection",
    "SkillManager",
    "SkillManagerIncompleteError",
    "SessionCheck",
    "SkillManagerLike",
    "SkillManagerOutput",
    "SkillSource",
    "UnknownSkillError",
]

_EXPORTS: dict[str, str] = {
    "DEFAULT_HARMFUL_THRESHOLD": "ace.roles.skill_manager",
    "READ_SKILL_TOOL": "ace.roles.skill_source",
    "SKILL_INJECTIONS": "ace.roles.injection",
    "Agent": "ace.roles.agent",
    "AgentLike": "ace.roles.protocols",
    "AgentOutput": "ace.roles.outputs",
    "InjectedSkills": "ace.roles.injected_skills",
    "RRDeps": "ace.roles.recursive_reflector",
    "RecursiveReflector": "ace.roles.recursive_reflector",
    "Reflector": "ace.roles.reflector",
    "ReflectorLike": "ace.roles.protocols",
    "ReflectorOutput": "ace.roles.outputs",
    "SMDeps": "ace.roles.skill_manager",
    "Sample": "ace.traces.sample",
    "SkillInjection": "ace.roles.injection",
    "SkillManager": "ace.roles.skill_manager",
    "SkillManagerIncompleteError": "ace.roles.skill_manager",
    "SessionCheck": "ace.roles.protocols",
    "SkillManagerLike": "ace.roles.protocols",
    "SkillManagerOutput": "ace.roles.outputs",
    "SkillSource": "ace.roles.skill_source",
    "UnknownSkillError": "ace.roles.skill_source",
}
"""Where each lazily imported name of `__all__` lives (a test checks that the two agree)."""


__getattr__ = lazy_getattr(__name__, _EXPORTS)
