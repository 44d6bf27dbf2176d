"""Which samples the learning tail learns from (`learn_from`): a light module, so command-line
parsers can offer the choices without loading the roles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ace.traces.fields import trace_reward

__all__ = ["LEARN_FROM", "LearnFrom", "skip_reason"]

LearnFrom = Literal["all", "failures"]
"""`all`, or `failures`: every sample except a full success (reward 1.0) into which no skill was
injected. Such a run shows what the agent already does unaided: there is nothing to correct and no
skill to credit, and a small Reflector asked for a lesson from it tends to invent (or invert) one."""

LEARN_FROM: tuple[LearnFrom, ...] = ("all", "failures")
"""The values of `LearnFrom`."""


def skip_reason(learn_from: LearnFrom, trace: Any, injected_skill_ids: Sequence[str]) -> str | None:
    """Why a sample with `trace` and `injected_skill_ids` is not learned from under `learn_from`,
    or None when it is (`ace.traces.trace_reward` reads the reward)."""
    if learn_from == "failures" and not injected_skill_ids and trace_reward(trace) == 1.0:
        return "a full success with no skill injected (learn_from='failures')"
    return None
