"""How learned skills reach an agent: the closed set of injection policies (no dependencies, so a
command line can offer the choices without loading the roles)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["SKILL_INJECTIONS", "SkillInjection"]

SkillInjection = Literal["matched", "all", "tool"]
"""`matched`: the skills the matcher finds for the task; `all`: every active skill; `tool`: a catalog
of ids and issues, insights read through a `read_skill` tool."""
SKILL_INJECTIONS: tuple[SkillInjection, ...] = get_args(SkillInjection)
"""The policies, in the order they are documented."""
