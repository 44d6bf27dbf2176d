"""The four roles of the learning loop, each a Protocol plus a pydantic-ai implementation.

`Agent` answers a task with the skills a `SkillSource` hands out (matched, all, or read on demand);
`Reflector` (one pass) and `RecursiveReflector` (code over the trace in a sandbox) analyse a trace; `SkillManager` turns reflections into skillbook
mutations through atomic tools. Prompts live in `ace.roles.prompts`.
"""

from ace.roles.agent import Agent
from ace.roles.injected_skills import InjectedSkills
from ace.roles.outputs import AgentOutput, ReflectorOutput, SkillManagerOutput
from ace.roles.protocols import AgentLike, ReflectorLike, SkillManagerLike
from ace.roles.recursive_reflector import RecursiveReflector, RRDeps
from ace.roles.reflector import Reflector
from ace.roles.sample import Sample
from ace.roles.skill_manager import (
    DEFAULT_HARMFUL_THRESHOLD,
    SkillManager,
    SkillManagerIncompleteError,
    SMDeps,
)
from ace.roles.skill_source import (
    READ_SKILL_TOOL,
    SKILL_INJECTIONS,
    SkillInjection,
    SkillSource,
    UnknownSkillError,
)

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
    "SkillManagerLike",
    "SkillManagerOutput",
    "SkillSource",
    "UnknownSkillError",
]
