"""The audit log of skillbook mutations: `UpdateOperation` and `UpdateBatch`, JSON round-trippable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ace.skillbook._checks import text
from ace.skillbook._errors import SkillbookError
from ace.skillbook._provenance import OPERATION_TYPES, InsightSource, OperationType
from ace.skillbook._skill import VALID_SECTIONS
from ace.untrusted import quote

__all__ = ["UpdateBatch", "UpdateOperation"]

_TAG_DELTAS = frozenset({-1, 0, 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateOperation:
    """One mutation as recorded in the audit log (what was done, not a plan).

    Which fields matter depends on `type`: ADD uses section, issue, keywords, insight and the
    assigned skill_id; UPDATE uses skill_id plus the changed issue/keywords/insight (None = kept);
    TAG uses skill_id and delta; REMOVE uses skill_id and reason. Raises `SkillbookError` on an
    unknown type, a TAG without a valid delta, or a non-ADD operation without skill_id.
    """

    type: OperationType
    """ADD, UPDATE, TAG or REMOVE."""
    section: str | None = None
    """Section of the skill (required for ADD)."""
    skill_id: str | None = None
    """The skill mutated; for ADD, the id the skill received."""
    issue: str | None = None
    """New issue text (ADD, UPDATE)."""
    insight: str | None = None
    """New insight text (ADD, UPDATE)."""
    keywords: tuple[str, ...] | None = None
    """New keywords (ADD, UPDATE); None keeps the current ones on UPDATE."""
    delta: int | None = None
    """TAG outcome: +1 helpful, -1 harmful, 0 neutral."""
    reason: str | None = None
    """Why the skill was removed (REMOVE)."""
    insight_source: InsightSource | None = None
    """The trace that motivated the operation."""

    def __post_init__(self) -> None:
        if not isinstance(self.type, str) or self.type not in OPERATION_TYPES:
            raise SkillbookError(f"operation type must be one of {sorted(OPERATION_TYPES)}, got {quote(self.type)}")
        if self.delta is not None and (isinstance(self.delta, bool) or not isinstance(self.delta, int)):
            raise SkillbookError(f"delta must be -1, 0 or 1, got {quote(self.delta)}")
        if self.type == "TAG" and self.delta not in _TAG_DELTAS:
            raise SkillbookError(f"TAG operation needs delta in {{-1, 0, 1}}, got {quote(self.delta)}")
        if self.section is not None and (not isinstance(self.section, str) or self.section not in VALID_SECTIONS):
            raise SkillbookError(f"section must be one of {sorted(VALID_SECTIONS)}, got {quote(self.section)}")
        if self.type == "ADD" and not self.section:
            raise SkillbookError("ADD operation needs a section")
        if self.skill_id is not None:
            text(self.skill_id, "skill_id")
        if self.type != "ADD" and not self.skill_id:
            raise SkillbookError(f"{self.type} operation needs a skill_id")
        for name in ("issue", "insight", "reason"):
            if getattr(self, name) is not None:
                text(getattr(self, name), name)
        if self.keywords is not None:
            if not isinstance(self.keywords, (list, tuple)):
                raise SkillbookError(f"keywords must be a list of strings, got {quote(self.keywords)}")
            object.__setattr__(self, "keywords", tuple(text(keyword, "keywords") for keyword in self.keywords))
        if self.insight_source is not None and not isinstance(self.insight_source, InsightSource):
            raise SkillbookError(f"insight_source must be an InsightSource, got {quote(self.insight_source)}")

    def to_json(self) -> dict[str, Any]:
        """The JSON form; unset fields are left out."""
        data: dict[str, Any] = {"type": self.type}
        for name in ("section", "skill_id", "issue", "insight", "delta", "reason"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        if self.keywords is not None:
            data["keywords"] = list(self.keywords)
        if self.insight_source is not None:
            data["insight_source"] = self.insight_source.to_dict()
        return data

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> UpdateOperation:
        """Build from the JSON form. Also reads ace-framework 0.13 logs, which keep a TAG's delta
        under `metadata.delta`. Raises `SkillbookError` on unknown fields or invalid values."""
        if not isinstance(payload, Mapping):
            raise SkillbookError(f"an operation must be a JSON object, got {quote(payload)}")
        data = dict(payload)
        metadata = data.pop("metadata", None) or {}
        if not isinstance(metadata, Mapping):
            raise SkillbookError(f"operation metadata must be a JSON object, got {quote(metadata)}")
        if "delta" not in data and "delta" in metadata:
            data["delta"] = metadata["delta"]
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise SkillbookError(f"operation has unknown field(s) {quote(unknown)}; known fields: {sorted(known)}")
        if isinstance(data.get("type"), str):
            data["type"] = data["type"].upper()
        source = data.pop("insight_source", None)
        if source is not None:
            data["insight_source"] = InsightSource.from_dict(source)
        return cls(**data)


@dataclass(frozen=True, slots=True)
class UpdateBatch:
    """The operations of one SkillManager session with its reasoning, in the order they ran."""

    reasoning: str
    """The SkillManager's summary of why it made these changes."""
    operations: tuple[UpdateOperation, ...] = ()
    """The mutations, in order."""

    def __post_init__(self) -> None:
        text(self.reasoning, "reasoning")
        if not isinstance(self.operations, (list, tuple)) or not all(
            isinstance(operation, UpdateOperation) for operation in self.operations
        ):
            raise SkillbookError(f"operations must be UpdateOperation records, got {quote(self.operations)}")
        object.__setattr__(self, "operations", tuple(self.operations))

    def to_json(self) -> dict[str, Any]:
        """The JSON form: `{"reasoning": ..., "operations": [...]}`."""
        return {"reasoning": self.reasoning, "operations": [op.to_json() for op in self.operations]}

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> UpdateBatch:
        """Build from the JSON form; raises `SkillbookError` on an invalid operation."""
        if not isinstance(payload, Mapping) or not isinstance(payload.get("operations", []), list):
            raise SkillbookError(
                f"an update batch must be {{'reasoning': str, 'operations': [...]}}, got {quote(payload)}"
            )
        reasoning = payload.get("reasoning", "")
        return cls(
            reasoning=reasoning if isinstance(reasoning, str) else str(reasoning),
            operations=tuple(UpdateOperation.from_json(op) for op in payload.get("operations", [])),
        )
