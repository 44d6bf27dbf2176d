"""Deprecated alias of `ace_eval.scripted` (kept for one release): import the scripted models from
`ace_eval.scripted` instead."""

from __future__ import annotations

from ace_eval.scripted import SCRIPTED
from ace_eval.scripted.models import (
    scripted_agent,
    scripted_recursive_reflector,
    scripted_reflector,
    scripted_skill_manager,
    scripted_user,
)

__all__ = [
    "SCRIPTED",
    "scripted_agent",
    "scripted_recursive_reflector",
    "scripted_reflector",
    "scripted_skill_manager",
    "scripted_user",
]
