"""Provenance records: which trace (and where in it) informed a skill mutation."""

from __future__ import annotations

import dataclasses
import getpass
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args

from ace.skillbook._checks import integer, optional_text, text
from ace.skillbook._errors import SkillbookError
from ace.untrusted import quote

__all__ = [
    "CONFIRMATION",
    "COUNTEREXAMPLE",
    "DEDUP_SOURCE_SYSTEM",
    "ManualOrigin",
    "OperationType",
    "InsightSource",
    "Relation",
    "TraceRef",
    "manual_source",
]

OperationType = Literal["ADD", "UPDATE", "TAG", "REMOVE"]
OPERATION_TYPES: frozenset[str] = frozenset(get_args(OperationType))
Relation = Literal["primary", "supporting"]
"""How a trace relates to a skill: its primary trace (the first that taught it) or a supporting one."""
COUNTEREXAMPLE = "counterexample"
"""The relation of a harmful TAG record whose trace is a counterexample of the skill: the agent got
the task wrong with the skill injected and right without it (`ace.steps.CounterexampleStep`)."""
CONFIRMATION = "confirmation"
"""The relation of a helpful TAG record whose trace is a confirmation of the skill: a task it was not
learned from that the agent got fully right with the skill and not without it (`ace.steps.ConfirmationStep`)."""
DEDUP_SOURCE_SYSTEM = "ace-dedup"
"""The source_system of deduplication's own records (a merge, not a trace)."""
ManualOrigin = Literal["api", "cli", "ui"]
"""Where a mutation made by hand (not learned from a trace) came from: a library call without a
source, the `ace` command, or the `ace serve` UI."""
MANUAL_ORIGINS: frozenset[str] = frozenset(get_args(ManualOrigin))
UNKNOWN_USER = "unknown-user"
"""The trace_id of a manual record when the operating-system user cannot be told."""


def _int_tuple(values: Any, field: str) -> tuple[int, ...]:
    if not isinstance(values, (list, tuple)):
        raise SkillbookError(f"{field} must be a list of integers, got {quote(values)}")
    return tuple(integer(value, field) for value in values)


def _text_tuple(values: Any, field: str) -> tuple[str, ...]:
    if not isinstance(values, (list, tuple)):
        raise SkillbookError(f"{field} must be a list of strings, got {quote(values)}")
    return tuple(text(value, field) for value in values)


def _unknown_keys(payload: Mapping[str, Any], cls: type, what: str) -> None:
    if not isinstance(payload, Mapping):
        raise SkillbookError(f"{what} must be a JSON object, got {quote(payload)}")
    known = cls.__dataclass_fields__.keys()  # type: ignore[attr-defined]
    unknown = sorted(payload.keys() - known)
    if unknown:
        raise SkillbookError(f"{what} has unknown field(s) {quote(unknown)}; known fields: {sorted(known)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceRef:
    """A best-effort anchor inside a trace: an excerpt, and where it sits when the trace is structured."""

    text_excerpt: str | None = None
    """A short quote from the trace that supports the learning."""
    excerpt_location: str | None = None
    """Where the excerpt came from, in words (e.g. `operation.evidence`)."""
    json_path: str | None = None
    """JSONPath of the excerpt inside a structured trace."""
    step_indices: tuple[int, ...] = ()
    """Indices of the trace steps the excerpt refers to."""
    message_indices: tuple[int, ...] = ()
    """Indices of the conversation messages the excerpt refers to."""
    span_ids: tuple[str, ...] = ()
    """Ids of the tracing spans the excerpt refers to."""

    def __post_init__(self) -> None:
        for name in ("text_excerpt", "excerpt_location", "json_path"):
            object.__setattr__(self, name, optional_text(getattr(self, name), f"trace_refs.{name}"))
        object.__setattr__(self, "step_indices", _int_tuple(self.step_indices, "trace_refs.step_indices"))
        object.__setattr__(self, "message_indices", _int_tuple(self.message_indices, "trace_refs.message_indices"))
        object.__setattr__(self, "span_ids", _text_tuple(self.span_ids, "trace_refs.span_ids"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: unset fields are left out."""
        data: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None or value == ():
                continue
            data[field.name] = list(value) if isinstance(value, tuple) else value
        return data

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> TraceRef:
        """Build from the JSON form; raises `SkillbookError` on an unknown or mistyped field."""
        _unknown_keys(payload, cls, "trace_ref")
        return cls(**payload)


@dataclass(frozen=True, slots=True, kw_only=True)
class InsightSource:
    """One provenance record: a trace that informed a skill mutation.

    Give `trace_uid`, or `source_system` and `trace_id` (the missing ones are derived:
    `trace_uid == f"{source_system}:{trace_id}"`). Raises `SkillbookError` when the identity is
    incomplete or a field has the wrong type.
    """

    trace_uid: str = ""
    """Stable identity of the trace across systems, `<source_system>:<trace_id>`."""
    source_system: str = ""
    """The system the trace came from (e.g. `tau2-airline`)."""
    trace_id: str = ""
    """The trace's id inside its source system."""
    display_name: str | None = None
    """A human-friendly name for the trace (file name, conversation title)."""
    relation: str | None = None
    """How the trace relates to the skill (e.g. `primary`, `supporting`), when known."""
    sample_question: str | None = None
    """The task or question of the sample that produced the trace."""
    epoch: int | None = None
    """Training epoch in which the mutation happened."""
    step: int | None = None
    """Sample index within the epoch."""
    operation_type: OperationType | None = None
    """The mutation this record documents; set by the Skillbook when it is appended."""
    error_identification: str | None = None
    """What went wrong in the trace, as the Reflector put it."""
    learning_text: str | None = None
    """The learning drawn from the trace."""
    trace_refs: tuple[TraceRef, ...] = ()
    """Anchors inside the trace that support the learning."""

    def __post_init__(self) -> None:
        trace_uid = optional_text(self.trace_uid, "trace_uid") or ""
        source_system = optional_text(self.source_system, "source_system") or ""
        trace_id = optional_text(self.trace_id, "trace_id") or ""
        if trace_uid and ":" in trace_uid and not (source_system and trace_id):
            inferred_system, inferred_id = trace_uid.split(":", 1)
            source_system = source_system or inferred_system
            trace_id = trace_id or inferred_id
        if not (source_system and trace_id):
            raise SkillbookError(
                "InsightSource needs source_system and trace_id (or trace_uid "
                f"'<source_system>:<trace_id>'), got trace_uid={quote(self.trace_uid)}, "
                f"source_system={quote(self.source_system)}, trace_id={quote(self.trace_id)}"
            )
        object.__setattr__(self, "trace_uid", trace_uid or f"{source_system}:{trace_id}")
        object.__setattr__(self, "source_system", source_system)
        object.__setattr__(self, "trace_id", trace_id)
        for name in ("display_name", "relation", "sample_question", "error_identification", "learning_text"):
            object.__setattr__(self, name, optional_text(getattr(self, name), name))
        for name in ("epoch", "step"):
            if getattr(self, name) is not None:
                integer(getattr(self, name), name)
        if self.operation_type is not None and not (
            isinstance(self.operation_type, str) and self.operation_type in OPERATION_TYPES
        ):
            raise SkillbookError(
                f"operation_type must be one of {sorted(OPERATION_TYPES)} or None, got {quote(self.operation_type)}"
            )
        if not isinstance(self.trace_refs, (list, tuple)):
            raise SkillbookError(f"trace_refs must be a list of objects, got {quote(self.trace_refs)}")
        refs = tuple(ref if isinstance(ref, TraceRef) else TraceRef.from_dict(ref) for ref in self.trace_refs)
        object.__setattr__(self, "trace_refs", refs)

    def replace(self, **changes: Any) -> InsightSource:
        """A copy with `changes` applied (e.g. a per-operation source derived from a base one).

        Changing source_system or trace_id without giving trace_uid re-derives trace_uid.
        """
        if changes.keys() & {"source_system", "trace_id"} and "trace_uid" not in changes:
            changes["trace_uid"] = ""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the one ace-framework 0.13 reads): unset fields are left out."""
        data: dict[str, Any] = {
            "trace_uid": self.trace_uid,
            "source_system": self.source_system,
            "trace_id": self.trace_id,
        }
        for name in (
            "display_name",
            "relation",
            "sample_question",
            "epoch",
            "step",
            "operation_type",
            "error_identification",
            "learning_text",
        ):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        if self.trace_refs:
            data["trace_refs"] = [ref.to_dict() for ref in self.trace_refs]
        return data

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> InsightSource:
        """Build from the JSON form; raises `SkillbookError` on an unknown or mistyped field."""
        _unknown_keys(payload, cls, "insight source")
        data = dict(payload)
        refs = data.pop("trace_refs", None)
        if refs is None:
            refs = ()
        if not isinstance(refs, list | tuple):
            raise SkillbookError(f"trace_refs must be a list of objects, got {quote(refs)}")
        return cls(**data, trace_refs=tuple(TraceRef.from_dict(ref) for ref in refs))


def manual_source(origin: ManualOrigin, *, reason: str | None = None, user: str | None = None) -> InsightSource:
    """The provenance of a mutation made by hand rather than learned from a trace.

    `source_system` is the origin (`api`, `cli`, `ui`), `trace_id` the user (default: the OS user
    running this process, `unknown-user` when it cannot be told), `learning_text` the reason given.
    Raises `SkillbookError` for an origin outside `ManualOrigin`.
    """
    if origin not in get_args(ManualOrigin):
        raise SkillbookError(f"origin must be one of {sorted(get_args(ManualOrigin))}, got {quote(origin)}")
    return InsightSource(source_system=origin, trace_id=user or _os_user(), learning_text=reason)


@cache
def _os_user() -> str:
    try:
        return getpass.getuser() or UNKNOWN_USER
    except (OSError, KeyError, ImportError):  # no login name in the environment and no passwd entry
        return UNKNOWN_USER
