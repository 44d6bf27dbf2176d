"""Consolidating near-duplicate skills with a deterministic, documented policy.

Detection: among the active skills of one section, pairs whose normalised issue + insight text is
identical ("exact"), then pairs whose embedding cosine is at least `similarity_threshold`
("similar"). Pairs recorded as distinct (a KEEP decision in the skillbook, e.g. from ace-framework
0.13) are never proposed.

Skills of different sections are never compared: a section says who the skill is for (a context
skill is injected into the agent and must carry an insight; a harness skill catalogs a problem of
the runtime environment for whoever fixes the harness, and may have none). Two similar skills in
the two sections are one problem seen by two audiences; merging either into the other would take
it away from one of them, which is a judgement for the SkillManager or an operator, not for a
similarity score.

Policy, per pair in order (exact first, then by similarity, then by ids): the keeper is the skill
with the higher helpful - harmful, then the higher used_count, then the older id; it absorbs the
other's keywords (keeper's first), gets the other's insight if it has none, and gets one UPDATE
occurrence per occurrence of the other (its provenance, with relation="supporting", or "primary"
when it comes from the keeper's primary trace: the keeper keeps its one primary trace, see
`ace.roles.provenance`); the other is soft-removed with the reason "duplicate of <keeper>". The
merge's own record (source_system "ace-dedup") has no relation.
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
from ace.errors import UsageError
from ace.retrieval import Embedder, LiteLLMEmbedder, default_embedder, skill_index
from ace.skillbook import DEDUP_SOURCE_SYSTEM, InsightSource, Skill, Skillbook, UpdateOperation

__all__ = ["DeduplicationConfig", "DeduplicationManager", "DeduplicationReport", "DuplicatePair"]

Candidate = tuple[Skill, Skill, float, Literal["exact", "similar"]]
"""A proposed pair: the two skills (id order), their similarity and how the pair was found."""


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
    """Cosine similarity at or above which two skills of one section count as duplicates (skills of
    different sections are never compared: see the module docstring)."""

    def __post_init__(self) -> None:
        if not 0.0 < self.similarity_threshold <= 1.0:
            raise UsageError(f"similarity_threshold must be in (0, 1]; got {self.similarity_threshold}")


@dataclasses.dataclass(frozen=True)
class DuplicatePair:
    """A pair of duplicate skills of one section: `other_id` was consolidated into `kept_id`."""

    kept_id: str
    """The skill that stays and absorbed the other."""
    other_id: str
    """The skill that was soft-removed ("duplicate of <kept_id>")."""
    similarity: float
    """Cosine similarity of the pair (1.0 for exact duplicates)."""
    kind: Literal["exact", "similar"]
    """How the pair was found."""


@dataclasses.dataclass(frozen=True)
class DeduplicationReport:
    """What one deduplication run did."""

    pairs: tuple[DuplicatePair, ...] = ()
    """Every pair merged in this run, in merge order."""
    operations: tuple[UpdateOperation, ...] = ()
    """The skillbook mutations applied (UPDATE of keepers, REMOVE of absorbed skills)."""

    @property
    def merged(self) -> int:
        """How many skills were absorbed into another."""
        return len(self.pairs)


class DeduplicationManager:
    """Finds duplicate skills and consolidates them (see the module docstring for the policy)."""

    def __init__(self, config: DeduplicationConfig | None = None) -> None:
        self.config = config or DeduplicationConfig()
        """The detection settings."""
        self._embedder: Embedder | None = self.config.embedder

    def find_duplicates(self, skillbook: Skillbook) -> list[Candidate]:
        """Candidate pairs among the active skills of each section, exact ones first, then by
        similarity (desc), then ids. Pairs with a recorded KEEP decision are left out. Raises
        `EmbeddingError` when embedding fails."""
        skills = skillbook.skills()
        exact = _exact_pairs(skills)
        vectors = self._vectors(skillbook) if len(skills) > 1 else {}
        similar: list[Candidate] = []
        for a, b in itertools.combinations(skills, 2):
            if a.section != b.section or (a.id, b.id) in exact or a.id not in vectors or b.id not in vectors:
                continue
            score = float(np.dot(vectors[a.id], vectors[b.id]))
            if score >= self.config.similarity_threshold:
                similar.append((a, b, score, "similar"))
        candidates: list[Candidate] = [(a, b, 1.0, "exact") for a, b in exact.values()]
        candidates += sorted(similar, key=lambda pair: (-pair[2], pair[0].id, pair[1].id))
        return [pair for pair in candidates if not skillbook.has_keep_decision(pair[0].id, pair[1].id)]

    def run(self, skillbook: Skillbook) -> DeduplicationReport:
        """Consolidate every duplicate pair in `skillbook`; returns the report (also recorded on the
        `ace.deduplicate` span)."""
        if not self.config.enabled:
            return DeduplicationReport()
        with tracing.span("ace.deduplicate", skills=len(skillbook)) as span:
            pairs: list[DuplicatePair] = []
            operations: list[UpdateOperation] = []
            absorbed: set[str] = set()
            for a, b, score, kind in self.find_duplicates(skillbook):
                if a.id in absorbed or b.id in absorbed:
                    continue
                keeper, other = sorted((a, b), key=_keeper_rank)
                operations += _merge(skillbook, keeper.id, other.id, score)
                absorbed.add(other.id)
                pairs.append(DuplicatePair(keeper.id, other.id, score, kind))
            report = DeduplicationReport(tuple(pairs), tuple(operations))
            span.set_attributes({"merged": report.merged, "pairs": [dataclasses.asdict(pair) for pair in pairs]})
            return report

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
        text = f"{skill.section}\n{_normalise(skill.issue)}\n{_normalise(skill.insight or '')}"
        key = hashlib.sha256(text.encode()).hexdigest()
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
            type="UPDATE",
            section=keeper.section,
            skill_id=keeper_id,
            keywords=tuple(keywords),
            insight=insight,
            insight_source=source,
        )
    ]
    for occurrence in other.occurrences:
        merged = occurrence
        if occurrence.source_system != DEDUP_SOURCE_SYSTEM:
            current = skillbook.get_skill(keeper_id)  # its primary trace may be the one absorbed just before
            assert current is not None
            merged = occurrence.replace(relation=current.relation_of(occurrence.trace_uid))
        skillbook.update_skill(keeper_id, insight_source=merged)
        operations.append(
            UpdateOperation(type="UPDATE", section=keeper.section, skill_id=keeper_id, insight_source=merged)
        )
    reason = f"duplicate of {keeper_id} (similarity {score:.3f})"
    skillbook.remove_skill(other_id, reason, insight_source=source)
    operations.append(
        UpdateOperation(type="REMOVE", section=other.section, skill_id=other_id, reason=reason, insight_source=source)
    )
    return operations
