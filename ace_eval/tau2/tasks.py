"""tau2 task models (the `tasks` of a Results file and of tasks.json), mirroring upstream's schema.

Unknown fields are kept (`extra="allow"`) so a task read from a recorded file is written back whole.
"""

from __future__ import annotations

import textwrap
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ace_eval.tau2.errors import ResultsFormatError, validation_summary

__all__ = [
    "Action",
    "Description",
    "EvaluationCriteria",
    "RewardType",
    "StructuredUserInstructions",
    "Task",
    "UserScenario",
    "parse_tasks",
]

RewardType = Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]
_DEFAULT_REWARD_BASIS: tuple[RewardType, ...] = ("DB", "COMMUNICATE")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Action(_Open):
    """One gold tool call of a task."""

    action_id: str
    """Upstream id, `<task id>_<index>`."""
    requestor: Literal["assistant", "user"] = "assistant"
    """Who makes the call (always the agent in the airline domain)."""
    name: str
    """Tool name."""
    arguments: dict[str, Any]
    """Tool arguments, as JSON values."""
    info: str | None = None
    """Upstream free-text note."""
    compare_args: list[str] | None = None
    """Arguments an action check compares; None means all of `arguments`."""

    def matches(self, name: str, arguments: dict[str, Any]) -> bool:
        """Upstream `Action.compare_with_tool_call`: same name and equal compared arguments."""
        if name != self.name:
            return False
        keys = self.arguments.keys() if self.compare_args is None else self.compare_args
        return {k: v for k, v in arguments.items() if k in keys} == {
            k: v for k, v in self.arguments.items() if k in keys
        }


class EvaluationCriteria(_Open):
    """How a simulation of the task is graded."""

    actions: list[Action] | None = None
    """Gold actions; replaying them on a fresh DB gives the gold end state."""
    env_assertions: list[Any] | None = None
    """Upstream environment assertions (unused by the airline tasks)."""
    communicate_info: list[str] | None = None
    """Strings the agent must say (COMMUNICATE check)."""
    nl_assertions: list[str] | None = None
    """Natural-language assertions (not part of the airline reward)."""
    reward_basis: list[RewardType] = Field(default_factory=lambda: list(_DEFAULT_REWARD_BASIS))
    """Components multiplied into the reward."""


class StructuredUserInstructions(_Open):
    """The situation of the simulated user."""

    domain: str
    """Domain name ("airline")."""
    reason_for_call: str
    """Why the user calls."""
    known_info: str | None = None
    """What the user knows (name, user id, ...)."""
    unknown_info: str | None = None
    """What the user does not know."""
    task_instructions: str
    """How the user should behave."""

    def __str__(self) -> str:
        # Byte-for-byte upstream StructuredUserInstructions.__str__: the user simulator's prompt.
        tab = "\t"
        lines = [f"Domain: {self.domain}", f"Reason for call:\n{textwrap.indent(self.reason_for_call, tab)}"]
        if self.known_info is not None:
            lines.append(f"Known info:\n{textwrap.indent(self.known_info, tab)}")
        if self.unknown_info is not None:
            lines.append(f"Unknown info:\n{textwrap.indent(self.unknown_info, tab)}")
        lines.append(f"Task instructions:\n{textwrap.indent(self.task_instructions, tab)}")
        return "\n".join(lines)


class UserScenario(_Open):
    """Everything the user simulator is told about its role."""

    persona: str | None = None
    """General description of the user, if any."""
    instructions: StructuredUserInstructions | str
    """The specific situation and behaviour."""

    def __str__(self) -> str:
        lines = []
        if self.persona is not None:
            lines += ["Persona:", textwrap.indent(self.persona, "\t")]
        lines += ["Instructions:", textwrap.indent(str(self.instructions), "\t")]
        return "\n".join(lines)


class Description(_Open):
    """Human notes about a task."""

    purpose: str | None = None
    """What the task tests."""
    relevant_policies: str | None = None
    """Policy sections involved."""
    notes: str | None = None
    """Free text."""


class Task(_Open):
    """One tau2 airline task."""

    id: str
    """Task id ("0" .. "49")."""
    description: Description | None = None
    """Human notes."""
    user_scenario: UserScenario
    """What the simulated user is told."""
    initial_state: dict[str, Any] | None = None
    """Upstream initial state; None for every airline task (others are rejected when run)."""
    evaluation_criteria: EvaluationCriteria | None = None
    """Grading criteria; None grades every finished run 1.0 (upstream)."""


def parse_tasks(raw: Any, *, source: str) -> list[Task]:
    """Validate a JSON list of tasks; raise `ResultsFormatError` naming `source` if it is not one."""
    if not isinstance(raw, list):
        raise ResultsFormatError(f"{source}: expected a JSON list of tasks, got {type(raw).__name__}")
    try:
        return [Task.model_validate(item) for item in raw]
    except ValidationError as exc:
        raise ResultsFormatError(f"{source}: not a tau2 task list ({validation_summary(exc)})") from exc
