"""What each role returns: an answer, a reflection, and the SkillManager's audit log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ace.skillbook import UpdateOperation

__all__ = ["AgentOutput", "ReflectorOutput", "SkillManagerOutput"]


@dataclass(frozen=True)
class AgentOutput:
    """The Agent's answer to one task."""

    answer: str
    """The final answer given to the task."""
    reasoning: str
    """How the agent got there, in its own words."""
    injected_skill_ids: tuple[str, ...]
    """Ids of exactly the skills the agent was given - rendered into its prompt or read through its
    `read_skill` tool - in first-use order (injection is the ground truth of which skills were
    used; nothing is parsed from the answer)."""
    trace_fields: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """What a multi-turn agent adds to the trace besides its answer (e.g. a tau2 run's `task` and
    `simulation`); `EvaluateStep` merges it into `ctx.trace`. Plain JSON data."""


@dataclass(frozen=True)
class ReflectorOutput:
    """A reflection on one trace: pure analysis, with no decision about skills.

    A reflection with `failed=True` carries no analysis (its text fields are empty) and says why in
    `failure_reason`; consumers must skip it rather than learn from it. In the ACE loop,
    `ACEStepContext.reflection_failure` reports it for a sample.
    """

    reasoning: str
    """The reflector's reasoning over the trace."""
    error_identification: str
    """What went wrong (or, for a success, what was done right)."""
    root_cause_analysis: str
    """Why it went wrong."""
    correct_approach: str
    """What the agent should have done."""
    key_insight: str
    """The one lesson worth keeping."""
    failed: bool = False
    """True when no real analysis could be produced (budget exhausted, no code executed, ...)."""
    failure_reason: str | None = None
    """Why the reflection failed; None when it did not."""

    @classmethod
    def failure(cls, reason: str) -> ReflectorOutput:
        """A reflection marked failed because of `reason`, with every analysis field empty."""
        return cls(
            reasoning="",
            error_identification="",
            root_cause_analysis="",
            correct_approach="",
            key_insight="",
            failed=True,
            failure_reason=reason,
        )


@dataclass(frozen=True)
class SkillManagerOutput:
    """The SkillManager's account of one session: the skillbook is already mutated when it returns."""

    reasoning: str
    """The reasoning the SkillManager gave when it finalized (or why it did nothing)."""
    operations: tuple[UpdateOperation, ...]
    """Every mutation applied to the skillbook during the session, in the order applied."""
    finished: bool = True
    """False when the session did not end with `finalize`: a single tool-call pass, or no session
    at all because every reflection failed. Only a finished session counts as learning."""
    unbacked_claims: tuple[str, ...] = ()
    """Operation kinds (`ADD`, `UPDATE`, `TAG`, `REMOVE`) that `reasoning` says were done but that
    no successful tool call did: the account is wrong there (small models do this)."""
    undone: tuple[UpdateOperation, ...] = ()
    """The mutations a finished session made and a failed check undid (`operations` is then
    empty); see `undone_because`."""
    undone_because: str | None = None
    """Why the session's mutations were undone after finalize (e.g. the lesson did not fix its
    own task when rechecked); None when they were kept."""
