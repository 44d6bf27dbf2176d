"""ace: agents that learn from experience.

Agents run tasks; a Reflector analyses each trace; a SkillManager curates a skillbook of learned
skills; the next run gets the skills that apply. The whole loop is a pipeline of composable steps.
"""

__version__ = "0.1.0"

from ace.skillbook import InsightSource, Skill, Skillbook, TraceRef, UpdateBatch, UpdateOperation
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

__all__ = [
    "__version__",
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
]
