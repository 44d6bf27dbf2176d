"""Consolidating near-duplicate skills with a deterministic, documented policy.

Detection: among active skills (within one section unless configured otherwise), pairs whose
normalised issue + insight text is identical ("exact"), then pairs whose embedding cosine is at
least `similarity_threshold` ("similar"). Pairs already decided KEEP are never proposed again.

Policy, per pair in order (exact first, then by similarity, then by ids):
- skills of different sections are kept apart (a KEEP decision is recorded);
- otherwise the keeper is the skill with the higher helpful - harmful, then the higher used_count,
  then the older id; it absorbs the other's keywords (keeper's first), gets the other's insight if
  it has none, and gets one UPDATE occurrence per occurrence of the other (its provenance, with
  relation="supporting", or "primary" when it comes from the keeper's primary trace: the keeper
  keeps its one primary trace, see `ace.roles.provenance`); the other is soft-removed with the
  reason "duplicate of <keeper>". The merge's own record (source_system "ace-dedup") has no relation.
Every mutation goes through the Skillbook's own methods, so it lands in occurrences and in the
report's operations (an audit log `Skillbook.apply_update` can replay).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from typing import Literal

import numpy as np

from ace import tracing
from ace.retrieval import Embedder, LiteLLMEmbedder, default_embedder, skill_index
from ace.skillbook import DEDUP_SOURCE_SYSTEM, InsightSource, Skill, Skillbook, UpdateOperation

__all__ = ["DeduplicationConfig", "DeduplicationManager", "DeduplicationReport", "DuplicatePair"]


@dataclasses.dataclass(frozen=True)
class DeduplicationConfig:
    """How duplicates are found."""

    enabled: bool = True
    """When False, `run` does nothing and reports nothing."""
    embedder: Embedder | None = None
    """The embedder for similarity; None: `embedding_model` via litellm, else the local default."""
    embedding_model: str | None = None
    """A litellm embedding model name (e.g. "text-embedding-3-small"), used when `embedder` is None."""
    similarity_threshold: float = 0.85
    """Cosine similarity at or above which two skills count as duplicates."""
    within_section_only: bool = True
    """Compare only skills of the same section."""

    def __post_init__(self) -> None:
        if not 0.0 < self.similarity_threshold <= 1.0:
            raise ValueError(f"similarity_threshold must be in (0, 1]; got {self.similarity_threshold}")


@dataclasses.dataclass(frozen=True)
class DuplicatePair:
    """A pair of skills found to be duplicates, and what was decided."""

    kept_id: str
    """The skill that stays (and absorbed the other), or the first skill of a KEEP pair."""
    other_id: str
    """The skill that was soft-removed, or the second skill of a KEEP pair."""
    similarity: float
    """Cosine similarity of the pair (1.0 for exact duplicates)."""
    kind: Literal["exact", "similar"]
    """How the pair was found."""
    decision: Literal["MERGE", "KEEP"]
    """MERGE: `other_id` was consolidated into `kept_id`; KEEP: both stay, and stay apart."""


@dataclasses.dataclass(frozen=True)
class DeduplicationReport:
    """What one deduplication run did."""

    pairs: tuple[DuplicatePair, ...] = ()
    """Every pair decided in this run, in decision order."""
    operations: tuple[UpdateOperation, ...] = ()
    """The skillbook mutations applied (UPDATE of keepers, REMOVE of absorbed skills)."""

    @property
    def merged(self) -> int:
        """How many skills were absorbed into another."""
        return sum(pair.decision == "MERGE" for pair in self.pairs)


class DeduplicationManager:
    """Finds duplicate skills and consolidates them (see the module docstring for the policy)."""

    def __init__(self, config: DeduplicationConfig | None = None) -> None:
        self.config = config or DeduplicationConfig()
        """The detection settings."""
        self._embedder: Embedder | None = self.config.embedder

    def find_duplicates(self, skillbook: Skillbook) -> list[tuple[Skill, Skill, float, Literal["exact", "similar"]]]:
        """Candidate pairs among active skills, exact ones first, then by similarity (desc), then ids.
        Pairs with a recorded KEEP decision are left out. Raises `EmbeddingError` when embedding fails."""
        skills = skillbook.skills()
        exact = _exact_pairs(skills)
        vectors = self._vectors(skillbook) if len(skills) > 1 else {}
        similar = []
        for a, b in itertools.combinations(skills, 2):
            if (a.id, b.id) in exact or a.id not in vectors or b.id not in vectors:
                continue
            score = float(np.dot(vectors[a.id], vectors[b.id]))
            if score >= self.config.similarity_threshold:
                similar.append((a, b, score, "similar"))
        candidates = [(a, b, 1.0, "exact") for a, b in exact.values()]
        candidates += sorted(similar, key=lambda pair: (-pair[2], pair[0].id, pair[1].id))
        return [
            pair
            for pair in candidates
            if self._comparable(pair[0], pair[1]) and not skillbook.has_keep_decision(pair[0].id, pair[1].id)
        ]

    def run(self, skillbook: Skillbook) -> DeduplicationReport:
        """Consolidate every duplicate pair in `skillbook`; returns the report (also recorded on the `ace.deduplicate` span)."""
        if not self.config.enabled:
            return DeduplicationReport()
        with tracing.span("ace.deduplicate", skills=len(skillbook)) as span:
            pairs: list[DuplicatePair] = []
            operations: list[UpdateOperation] = []
            absorbed: set[str] = set()
            for a, b, score, kind in self.find_duplicates(skillbook):
                if a.id in absorbed or b.id in absorbed:
                    continue
                if a.section != b.section:
                    reasoning = f"different sections ({a.section}, {b.section}): kept apart"
                    skillbook.record_keep_decision(a.id, b.id, reasoning=reasoning, similarity=score)
                    pairs.append(DuplicatePair(a.id, b.id, score, kind, "KEEP"))
                    continue
                keeper, other = sorted((a, b), key=_keeper_rank)
                operations += _merge(skillbook, keeper.id, other.id, score)
                absorbed.add(other.id)
                pairs.append(DuplicatePair(keeper.id, other.id, score, kind, "MERGE"))
            report = DeduplicationReport(tuple(pairs), tuple(operations))
            span.set_attributes({"merged": report.merged, "kept_apart": len(pairs) - report.merged,
                                 "pairs": [dataclasses.asdict(pair) for pair in pairs]})
            return report

    def _comparable(self, a: Skill, b: Skill) -> bool:
        return a.section == b.section or not self.config.within_section_only

    def _vectors(self, skillbook: Skillbook) -> dict[str, np.ndarray]:
        if self._embedder is None:
            model = self.config.embedding_model
            self._embedder = LiteLLMEmbedder(model) if model else default_embedder()
        index = skill_index(skillbook, self._embedder)
        index.refresh()
        return index.vectors()


def _exact_pairs(skills: list[Skill]) -> dict[tuple[str, str], tuple[Skill, Skill]]:
    first_with_text: dict[str, Skill] = {}
    pairs: dict[tuple[str, str], tuple[Skill, Skill]] = {}
    for skill in skills:
        key = hashlib.sha256(f"{_normalise(skill.issue)}\n{_normalise(skill.insight or '')}".encode()).hexdigest()
        if key in first_with_text:
            first = first_with_text[key]
            pairs[(first.id, skill.id)] = (first, skill)
        else:
            first_with_text[key] = skill
    return pairs


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _keeper_rank(skill: Skill) -> tuple[int, int, tuple[str, int]]:
    section, _, number = skill.id.rpartition("-")
    return (-(skill.helpful_count - skill.harmful_count), -skill.used_count, (section, int(number or 0)))


def _merge(skillbook: Skillbook, keeper_id: str, other_id: str, score: float) -> list[UpdateOperation]:
    keeper, other = skillbook.get_skill(keeper_id), skillbook.get_skill(other_id)
    assert keeper is not None and other is not None
    source = InsightSource(
        source_system=DEDUP_SOURCE_SYSTEM,
        trace_id=f"{keeper_id}+{other_id}",
        learning_text=f"merged duplicate {other_id} (similarity {score:.3f}) into {keeper_id}",
    )
    keywords = list(dict.fromkeys([*keeper.keywords, *other.keywords]))
    insight = other.insight if not keeper.insight and other.insight else None
    skillbook.update_skill(keeper_id, keywords=keywords, insight=insight, insight_source=source)
    operations = [
        UpdateOperation(
            type="UPDATE", section=keeper.section, skill_id=keeper_id, keywords=tuple(keywords),
            insight=insight, insight_source=source,
        )
    ]
    for occurrence in other.occurrences:
        merged = occurrence
        if occurrence.source_system != DEDUP_SOURCE_SYSTEM:
            current = skillbook.get_skill(keeper_id)  # its primary trace may be the one absorbed just before
            assert current is not None
            merged = occurrence.replace(relation=current.relation_of(occurrence.trace_uid))
        skillbook.update_skill(keeper_id, insight_source=merged)
        operations.append(UpdateOperation(type="UPDATE", section=keeper.section, skill_id=keeper_id, insight_source=merged))
    reason = f"duplicate of {keeper_id} (similarity {score:.3f})"
    skillbook.remove_skill(other_id, reason, insight_source=source)
    operations.append(
        UpdateOperation(type="REMOVE", section=other.section, skill_id=other_id, reason=reason, insight_source=source)
    )
    return operations
