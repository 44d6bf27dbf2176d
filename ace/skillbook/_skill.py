"""The Skill record and the invariants every skill satisfies."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, get_args

from ace.skillbook._checks import MAX_INTEGER, integer, required_text, text, timestamp
from ace.skillbook._errors import SkillbookError
from ace.skillbook._provenance import (
    CONFIRMATION,
    COUNTEREXAMPLE,
    DEDUP_SOURCE_SYSTEM,
    MANUAL_ORIGINS,
    InsightSource,
    Relation,
)
from ace.untrusted import quote

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COUNTERS",
    "EMBEDDING_FIELDS",
    "EmbeddingKind",
    "MAX_EMBEDDING_DIMENSION",
    "MAX_ID_DIGITS",
    "MAX_KEYWORD_LENGTH",
    "SECTIONS",
    "Section",
    "Skill",
    "TAG_OUTCOMES",
    "TagDelta",
    "VALID_SECTIONS",
    "as_embedding",
    "id_number",
    "match_text",
    "normalize_keywords",
    "skill_id_order",
    "utc_now",
]

Section = Literal["context", "harness"]
"""The two sections: `context` (learnings the agent applies) and `harness` (runtime issues)."""
SECTIONS: tuple[Section, ...] = get_args(Section)
"""The sections in skillbook order (the order skills are listed and rendered)."""
VALID_SECTIONS: frozenset[str] = frozenset(SECTIONS)
"""The sections as a set, for membership tests."""

TagDelta = Literal[-1, 0, 1]
"""An effectiveness observation: +1 helpful, -1 harmful, 0 neutral."""
TAG_OUTCOMES: Mapping[int, str] = MappingProxyType({1: "helpful", -1: "harmful", 0: "neutral"})
"""The outcome each `TagDelta` records; a tag bumps the skill's counter `<outcome>_count`."""

EmbeddingKind = Literal["search", "match"]
"""The two vectors a skill can carry: `search` embeds `embedding_text()` (issue + insight + keywords:
search and deduplication), `match` embeds `match_text()` (issue + keywords: task matching)."""

EMBEDDING_FIELDS: Mapping[EmbeddingKind, str] = {"search": "embedding", "match": "match_embedding"}
"""The `Skill` field holding each kind of vector."""

MAX_KEYWORD_LENGTH = 64
"""Keywords are short labels; a longer one is almost certainly prose in the wrong field."""

MAX_EMBEDDING_DIMENSION = 16_384
"""Largest vector accepted; today's embedders use 384 to 4,096 dimensions."""

MAX_ID_DIGITS = 12
"""Digits of a skill id's number (`context-` + 5 to 12 ASCII digits), so numbers stay small ints."""

_KEYWORD_SEPARATORS = re.compile(r"[\s\-]+")
_ID_NUMBER = re.compile(r"-([0-9]+)$", re.ASCII)
_ID_PATTERNS = {
    section: re.compile(rf"{section}-[0-9]{{5,{MAX_ID_DIGITS}}}", re.ASCII) for section in sorted(VALID_SECTIONS)
}


def utc_now() -> str:
    """The current time as an ISO-8601 UTC timestamp (the format of `created_at`/`updated_at`)."""
    return datetime.now(UTC).isoformat()


def id_number(skill_id: str) -> int:
    """The numeric part of `context-00042` (42)."""
    match = _ID_NUMBER.search(skill_id)
    if match is None:
        raise SkillbookError(f"skill id {quote(skill_id)} does not end in a number")
    return int(match.group(1))


def skill_id_order(skill_id: str) -> tuple[str, int]:
    """Sort key putting skill ids in skillbook order: by section, then by number (so `context-99999`
    comes before `context-100000`, which plain string order gets wrong)."""
    section, _, number = skill_id.rpartition("-")
    return section, int(number)


def normalize_keywords(keywords: Iterable[str]) -> tuple[str, ...]:
    """Normalise keywords to short lowercase identifiers.

    Each keyword is stripped and lowercased; runs of whitespace or hyphens become `_` (leading and
    trailing ones are dropped); empty results are dropped; duplicates are removed keeping the first.
    Raises `SkillbookError` when `keywords` is a string rather than a list, holds a non-string, a
    keyword longer than MAX_KEYWORD_LENGTH, or nothing is left.
    """
    if isinstance(keywords, (str, bytes)) or not isinstance(keywords, Iterable):
        raise SkillbookError(f"keywords must be a list of strings, got {quote(keywords)}")
    normalized: dict[str, None] = {}
    for keyword in keywords:
        if not isinstance(keyword, str):
            raise SkillbookError(f"keywords must be strings, got {quote(keyword)} in {quote(keywords)}")
        if len(keyword) > 4 * MAX_KEYWORD_LENGTH:  # long prose: refuse before normalising all of it
            label = keyword
        else:
            label = _KEYWORD_SEPARATORS.sub("_", text(keyword, "keywords").strip().lower()).strip("_")
        if len(label) > MAX_KEYWORD_LENGTH:
            raise SkillbookError(
                f"keywords must be short labels (at most {MAX_KEYWORD_LENGTH} characters), got {quote(keyword)}"
            )
        if label:
            normalized[label] = None
    if not normalized:
        raise SkillbookError(f"keywords must hold at least one non-empty label, got {quote(keywords)}")
    return tuple(normalized)


def match_text(issue: str, keywords: Iterable[str]) -> str:
    """The text a skill is matched on: its issue, then `Keywords: a, b` (never the insight).
    `Skill.match_text()` and the rerankers' candidates both use it."""
    labels = ", ".join(keyword.replace("_", " ") for keyword in keywords)
    return f"{issue}\nKeywords: {labels}"


def as_embedding(vector: Any, what: str) -> np.ndarray:
    """`vector` as a read-only 1-d float32 array; raises `SkillbookError` unless it is a non-empty,
    finite 1-d vector of numbers (ints or floats, not bools, strings or objects) with at most
    MAX_EMBEDDING_DIMENSION values. `what` names the vector in the message."""
    import numpy as np  # here: skills read without vectors (a command line) never load numpy

    if isinstance(vector, np.ndarray) and vector.dtype == np.float32 and not vector.flags.writeable:
        array = vector  # already validated or read from a file: no copy
    else:
        try:
            array = np.array(vector)  # a copy: the caller's array is never frozen or shared
        except (TypeError, ValueError, OverflowError) as exc:
            raise SkillbookError(f"embedding of {what} is not a numeric vector: {quote(str(exc))}") from None
        if array.dtype.kind not in "fiu":
            raise SkillbookError(f"embedding of {what} must hold numbers, got dtype {quote(str(array.dtype))}")
    if array.ndim != 1 or not 0 < array.size <= MAX_EMBEDDING_DIMENSION:
        raise SkillbookError(
            f"embedding of {what} must be a 1-d vector of 1 to {MAX_EMBEDDING_DIMENSION} values, got shape "
            f"{quote(array.shape)}"
        )
    with np.errstate(over="ignore"):  # a float64 beyond float32's range becomes inf, refused below
        array = array.astype(np.float32, copy=False)
    if not np.isfinite(array).all():
        raise SkillbookError(f"embedding of {what} holds NaN or infinite values")
    if array.flags.writeable:
        array.setflags(write=False)
    return array


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """One learned skill: an issue (when it applies), an insight (what to do), keywords, provenance.

    Skills are immutable snapshots: a Skillbook mutation replaces the skill with a new Skill, so a
    Skill you hold never changes under you. Constructing one validates the invariants (raises
    `SkillbookError` naming the field and value) and normalises keywords.
    """

    id: str
    """Unique id, `<section>-<5+ digits>` (e.g. `context-00001`); never reused."""
    section: Section
    """`context` (the agent applies it while solving) or `harness` (a runtime/pipeline issue)."""
    keywords: tuple[str, ...]
    """Fine-grained topic labels, normalised (see `normalize_keywords`); at least one."""
    issue: str
    """The problem, with its scope inline. Non-empty."""
    insight: str | None = None
    """The imperative action; required for `context` skills, optional (None) for `harness`."""
    occurrences: tuple[InsightSource, ...] = ()
    """Append-only provenance chain, one record per mutation that carried a source."""
    active: bool = True
    """False once soft-removed; inactive skills stay for history but leave active views."""
    used_count: int = 0
    """How many times the skill was injected into an agent's context."""
    helpful_count: int = 0
    """How many times it was tagged helpful (delta +1)."""
    harmful_count: int = 0
    """How many times it was tagged harmful (delta -1)."""
    neutral_count: int = 0
    """How many times it was tagged neutral (delta 0)."""
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    """Read-only 1-d float32 vector of `embedding_text()` (the search vector), or None; kept in the
    `.embeddings.npz` sidecar."""
    match_embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    """Read-only 1-d float32 vector of `match_text()` (the task matcher's recall vector), or None;
    kept in the same sidecar. Never read from or written to the JSON."""
    created_at: str = field(default_factory=utc_now)
    """ISO-8601 UTC time of creation."""
    updated_at: str = field(default_factory=utc_now)
    """ISO-8601 UTC time of the last mutation."""

    def __post_init__(self) -> None:
        if not isinstance(self.section, str) or self.section not in VALID_SECTIONS:
            raise SkillbookError(f"section must be one of {sorted(VALID_SECTIONS)}, got {quote(self.section)}")
        if not isinstance(self.id, str) or not _ID_PATTERNS[self.section].fullmatch(self.id):
            raise SkillbookError(
                f"id must look like '{self.section}-00001' (5 to {MAX_ID_DIGITS} digits) for its section, "
                f"got {quote(self.id)}"
            )
        object.__setattr__(self, "keywords", normalize_keywords(self.keywords))
        object.__setattr__(self, "issue", required_text(self.issue, "issue"))
        if self.section == "context":
            object.__setattr__(self, "insight", required_text(self.insight, "insight"))
        elif self.insight is not None:
            if not isinstance(self.insight, str):
                raise SkillbookError(f"insight must be a string or None, got {quote(self.insight)}")
            object.__setattr__(self, "insight", text(self.insight, "insight").strip() or None)
        if not isinstance(self.occurrences, (list, tuple)) or not all(
            isinstance(source, InsightSource) for source in self.occurrences
        ):
            raise SkillbookError(f"occurrences must be InsightSource records, got {quote(self.occurrences)}")
        object.__setattr__(self, "occurrences", tuple(self.occurrences))
        if not isinstance(self.active, bool):
            raise SkillbookError(f"active must be true or false, got {quote(self.active)}")
        for name in COUNTERS:
            integer(getattr(self, name), name, minimum=0, maximum=MAX_INTEGER)
        if self.embedding is not None:
            object.__setattr__(self, "embedding", as_embedding(self.embedding, repr(self.id)))
        if self.match_embedding is not None:
            object.__setattr__(self, "match_embedding", as_embedding(self.match_embedding, f"{self.id!r} (match)"))
        for name in ("created_at", "updated_at"):
            timestamp(getattr(self, name), name)

    def embedding_text(self) -> str:
        """The text that is embedded for search: issue, insight (if any), then `Keywords: a, b`."""
        parts = [self.issue]
        if self.insight is not None:
            parts.append(self.insight)
        if self.keywords:
            parts.append(f"Keywords: {', '.join(self.keywords)}")
        return "\n\n".join(parts)

    def match_text(self) -> str:
        """The text that is embedded for task matching: the issue, then `Keywords: a, b` (underscores
        as spaces). Never the insight: it says what to do, not when the skill applies."""
        return match_text(self.issue, self.keywords)

    def embedding_input(self, kind: EmbeddingKind) -> str:
        """The text the vector of `kind` is made from: `embedding_text()` or `match_text()`."""
        return self.match_text() if kind == "match" else self.embedding_text()

    @property
    def primary_trace_uid(self) -> str | None:
        """The trace_uid of the skill's primary trace: the occurrence marked `primary`, else (for a
        skill saved before relations were written) the first one without a relation; None when no
        trace taught it yet. Deduplication's own records never count."""
        traces = [o for o in self.occurrences if o.source_system != DEDUP_SOURCE_SYSTEM]
        marked = [o for o in traces if o.relation == "primary"] or [o for o in traces if o.relation is None]
        return marked[0].trace_uid if marked else None

    @property
    def learned_from_questions(self) -> tuple[str, ...]:
        """The distinct questions of the traces that added or updated the skill, oldest first."""
        return _distinct_questions(o for o in self.occurrences if o.operation_type in ("ADD", "UPDATE"))

    @property
    def counterexample_questions(self) -> tuple[str, ...]:
        """The distinct questions of its counterexamples (harmful TAG records of relation
        `COUNTEREXAMPLE`: tasks the agent got wrong with the skill and right without it), oldest first."""
        return _distinct_questions(
            o for o in self.occurrences if o.operation_type == "TAG" and o.relation == COUNTEREXAMPLE
        )

    @property
    def backing_trace_uids(self) -> tuple[str, ...]:
        """The distinct traces that back the skill, oldest first: those that added or updated it
        and its confirmations (helpful TAG records of relation `CONFIRMATION`: tasks it was not
        learned from that the agent got right with it and wrong without it). Hand-made records
        and deduplication's own never count."""
        backing = (
            o
            for o in self.occurrences
            if _from_a_trace(o)
            and (o.operation_type in ("ADD", "UPDATE") or (o.operation_type == "TAG" and o.relation == CONFIRMATION))
        )
        return tuple(dict.fromkeys(o.trace_uid for o in backing))

    @property
    def learned_from_traces(self) -> bool:
        """True when a trace (not a hand-made or deduplication record) added the skill."""
        return any(o.operation_type == "ADD" and _from_a_trace(o) for o in self.occurrences)

    def relation_of(self, trace_uid: str) -> Relation:
        """`primary` when `trace_uid` is the skill's primary trace or it has none yet, else `supporting`."""
        primary = self.primary_trace_uid
        return "primary" if primary is None or primary == trace_uid else "supporting"

    def counters(self) -> dict[str, int]:
        """Every counter by field name (`used_count`, `helpful_count`, ...), in `COUNTERS` order."""
        return {name: getattr(self, name) for name in COUNTERS}

    def counters_text(self) -> str:
        """The counters for people: `used 3, helpful 2, harmful 0, neutral 1`."""
        return ", ".join(f"{name.removesuffix('_count')} {value}" for name, value in self.counters().items())

    def replace(self, **changes: Any) -> Skill:
        """A validated copy with `changes` applied."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in `skillbook.json` (no embedding)."""
        return {
            "id": self.id,
            "section": self.section,
            "keywords": list(self.keywords),
            "issue": self.issue,
            "insight": self.insight,
            "occurrences": [source.to_dict() for source in self.occurrences],
            "active": self.active,
            **self.counters(),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> Skill:
        """Build from the JSON form. An `embedding` list (older files) becomes a float32 vector.

        Raises `SkillbookError` naming the field when a field is missing, unknown or invalid.
        """
        if not isinstance(payload, Mapping):
            raise SkillbookError(f"a skill must be a JSON object, got {quote(payload)}")
        unknown = sorted(payload.keys() - _SKILL_FIELDS)
        if unknown:
            raise SkillbookError(f"unknown field(s) {quote(unknown)}; known fields: {sorted(_SKILL_FIELDS)}")
        missing = [
            name for name in ("id", "section", "keywords", "issue", "created_at", "updated_at") if name not in payload
        ]
        if missing:
            raise SkillbookError(f"missing field(s) {missing}")
        data = dict(payload)
        raw_sources = data.pop("occurrences", None)
        if raw_sources is None:
            raw_sources = []
        if not isinstance(raw_sources, list):
            raise SkillbookError(f"occurrences must be a list, got {quote(raw_sources)}")
        return cls(**data, occurrences=tuple(InsightSource.from_dict(s) for s in raw_sources))


COUNTERS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Skill) if f.name.endswith("_count"))
"""The Skill's counter fields in field order: `used_count`, then one `<outcome>_count` per
`TAG_OUTCOMES` value. Everything that stores, copies or shows counters reads this list, so a new
counter is one new field."""

# `embedding` stays accepted for older files that stored it inline; match vectors only live in the sidecar.
_SKILL_FIELDS = frozenset(f.name for f in dataclasses.fields(Skill)) - {"match_embedding"}


def _from_a_trace(occurrence: InsightSource) -> bool:
    """Whether a provenance record comes from a trace, not from a hand-made or deduplication mutation."""
    return occurrence.source_system not in MANUAL_ORIGINS and occurrence.source_system != DEDUP_SOURCE_SYSTEM


def _distinct_questions(sources: Iterable[InsightSource]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(question for source in sources if (question := source.sample_question)))
