"""`SkillbookBase`: what a Skillbook holds and how it is read - skills, id counters, decisions,
embedder names, the change log and the lock - and the state API storage backends and the journal
use (`snapshot`, `restore`, `apply_changes`, `exclusive`). `Skillbook` adds the validated,
provenance-carrying mutations and persistence."""

from __future__ import annotations

import copy
import math
import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ace import tracing
from ace.skillbook._changelog import ChangeLog
from ace.skillbook._checks import text
from ace.skillbook._errors import SkillbookError, SkillNotFoundError
from ace.skillbook._reports import render_prompt, skill_stats, source_map, source_summary
from ace.skillbook._skill import EMBEDDING_FIELDS, SECTIONS, EmbeddingKind, Skill, as_embedding, skill_id_order, utc_now
from ace.skillbook._state import SkillbookChanges, SkillbookState, empty_last_numbers
from ace.untrusted import quote

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SkillbookBase", "pair_key", "with_embedding"]


def pair_key(skill_id_a: str, skill_id_b: str) -> str:
    """The key of a similarity decision about two skills ("idA,idB", ids sorted)."""
    return ",".join(sorted((skill_id_a, skill_id_b)))


def with_embedding(skill: Skill, embedding: np.ndarray | None, kind: EmbeddingKind = "search") -> Skill:
    """`skill` with another vector of `kind`; skips re-validation (the rest of the skill is unchanged
    and `embedding` is already a validated read-only vector or None)."""
    updated = copy.copy(skill)
    object.__setattr__(updated, EMBEDDING_FIELDS[kind], embedding)
    return updated


class SkillbookBase:
    """The data of a skillbook, its reads and its state API (see the module docstring).

    Thread-safe: every read and change runs under one re-entrant lock. Skills are immutable
    snapshots: a change replaces the stored Skill, so readers keep the objects they were given.
    Every change bumps `version`; `changed_ids_since` tells an index which ids to refresh.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._save_lock = threading.Lock()
        self._skills: dict[str, Skill] = {}
        self._order: list[str] | None = None
        """Skill ids in id order; rebuilt after an add, purge or load."""
        self._last_numbers: dict[str, int] = empty_last_numbers()
        self._embedding_model: str | None = None
        self._match_embedding_model: str | None = None
        self._similarity_decisions: dict[str, Any] = {}
        self._log = ChangeLog()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(skills={len(self)}, version={self.version})"

    # -- reads ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of skills, inactive ones included."""
        return len(self._skills)

    def __contains__(self, skill_id: object) -> bool:
        return skill_id in self._skills

    def get_skill(self, skill_id: str) -> Skill | None:
        """The skill with this id (active or not), or None."""
        return self._skills.get(skill_id)

    def skills(self, include_inactive: bool = False) -> list[Skill]:
        """Skills in id order (context before harness, then by number); only active ones by default."""
        with self._lock:
            if self._order is None:
                self._order = sorted(self._skills, key=skill_id_order)
            ordered = [self._skills[skill_id] for skill_id in self._order]
        return ordered if include_inactive else [s for s in ordered if s.active]

    def as_prompt(self) -> str:
        """Active skills rendered as Markdown grouped by section ("" when there are none)."""
        return render_prompt(self.skills())

    def stats(self) -> dict[str, Any]:
        """`{"sections", "skills" (all), "active_skills", "by_section": {section: active}}`."""
        return skill_stats(self.skills(include_inactive=True))

    def source_map(self) -> dict[str, list[dict[str, Any]]]:
        """`{skill_id: [occurrence dicts]}` for every skill, inactive ones included."""
        return source_map(self.skills(include_inactive=True))

    def source_summary(self) -> dict[str, Any]:
        """Occurrence counts by epoch, source_system, trace_uid, operation_type; skills with/without."""
        return source_summary(self.skills(include_inactive=True))

    @property
    def version(self) -> int:
        """Monotonic counter bumped by every mutation (including set_embeddings and load)."""
        with self._lock:
            return self._log.version

    def changed_ids_since(self, version: int, *, content_only: bool = False) -> frozenset[str] | None:
        """Ids of skills created, changed or deleted after `version`; None when the bounded change
        log no longer reaches back that far, or `version` is newer than this skillbook's (it was
        read from another one): rebuild everything.

        With `content_only`, only changes to issue, insight, keywords, existence or the active flag
        count (not counters, occurrences or embeddings).
        """
        with self._lock:
            return self._log.changed_since(version, content_only=content_only)

    def has_keep_decision(self, skill_id_a: str, skill_id_b: str) -> bool:
        """Whether the pair was decided KEEP (two distinct skills) by an earlier deduplication."""
        with self._lock:
            record = self._similarity_decisions.get(pair_key(skill_id_a, skill_id_b))
            return isinstance(record, Mapping) and record.get("decision") == "KEEP"

    @property
    def embedding_model(self) -> str | None:
        """Name of the embedder that made the stored search vectors (`Skill.embedding`), or None when
        none are stored."""
        return self._embedding_model

    @property
    def match_embedding_model(self) -> str | None:
        """Name of the embedder that made the stored match vectors (`Skill.match_embedding`), or None
        when none are stored. Each kind has its own: a search embedder and a matcher embedder can
        differ without clearing each other's vectors."""
        return self._match_embedding_model

    # -- similarity decisions ---------------------------------------------------------------

    def record_keep_decision(self, skill_id_a: str, skill_id_b: str, *, reasoning: str, similarity: float) -> None:
        """Remember that the two skills are distinct, so deduplication does not propose them again.

        Stored in `similarity_decisions` (the ace-framework 0.13 layout: key "idA,idB"). Raises
        `SkillNotFoundError` for an unknown id.
        """
        with self._lock:
            self._require(skill_id_a)
            self._require(skill_id_b)
            text(reasoning, "reasoning")
            finite = (
                isinstance(similarity, (int, float)) and not isinstance(similarity, bool) and math.isfinite(similarity)
            )
            if not finite:
                raise SkillbookError(f"similarity must be a finite number, got {quote(similarity)}")
            self._similarity_decisions[pair_key(skill_id_a, skill_id_b)] = {
                "decision": "KEEP",
                "reasoning": reasoning,
                "decided_at": utc_now(),
                "similarity_at_decision": float(similarity),
            }
            # No skill changed, but the saved document did: bump the version like every mutation.
            self._log.record((), content=False)

    # -- vectors: a cache beside the skills, not content ---------------------------------------

    def set_embeddings(
        self,
        vectors: Mapping[str, Any],
        *,
        model: str,
        computed_at_version: int | None = None,
        kind: EmbeddingKind = "search",
    ) -> frozenset[str]:
        """Store vectors (1-d, converted to read-only float32) of one `kind` made by embedder `model`.

        `kind="search"` (default) sets `Skill.embedding` (a vector of `embedding_text()`);
        `kind="match"` sets `Skill.match_embedding` (a vector of `match_text()`). Each kind has its
        own model and dimension and is never mixed with the other. Not a content change:
        `updated_at` stays. When `model` differs from the kind's model (`embedding_model` or
        `match_embedding_model`), every other skill's vector of that kind is cleared first (vector
        spaces are never mixed). Pass the `version` you read the texts at as `computed_at_version`:
        vectors of skills whose content changed since are skipped (they would be stale), and so are
        skills deleted since. Returns the ids stored. Raises `SkillNotFoundError` for an unknown id;
        `SkillbookError` for an unknown kind, a bad vector or a dimension that differs from the
        others of that kind.
        """
        with tracing.span("skillbook.set_embeddings", model=model, count=len(vectors), kind=kind), self._lock:
            if kind not in EMBEDDING_FIELDS:
                raise SkillbookError(f"kind must be one of {sorted(EMBEDDING_FIELDS)}, got {quote(kind)}")
            if not isinstance(model, str) or not model.strip():
                raise SkillbookError(f"model must name the embedder, got {quote(model)}")
            text(model, "model")
            attribute = EMBEDDING_FIELDS[kind]
            arrays = self._fresh_vectors(vectors, kind, computed_at_version)
            same_model = model == (self._match_embedding_model if kind == "match" else self._embedding_model)
            kept = [
                getattr(s, attribute) for s in self._skills.values() if same_model and getattr(s, attribute) is not None
            ]
            dims = {v.shape[0] for v in arrays.values()} | {v.shape[0] for v in kept[:1]}
            if len(dims) > 1:
                raise SkillbookError(
                    f"{kind} embeddings of model {quote(model)} must all have one dimension, got {sorted(dims)[:5]}"
                )
            changed = set(arrays)
            if not same_model:
                for skill in list(self._skills.values()):
                    if getattr(skill, attribute) is not None and skill.id not in arrays:
                        self._skills[skill.id] = with_embedding(skill, None, kind)
                        changed.add(skill.id)
            for skill_id, array in arrays.items():
                self._skills[skill_id] = with_embedding(self._skills[skill_id], array, kind)
            if kind == "match":
                self._match_embedding_model = model
            else:
                self._embedding_model = model
            self._log.record(changed, content=False)
            return frozenset(arrays)

    def _fresh_vectors(
        self, vectors: Mapping[str, Any], kind: EmbeddingKind, computed_at_version: int | None
    ) -> dict[str, np.ndarray]:
        """`vectors` validated, without those of skills deleted or edited since `computed_at_version`
        (stale). Raises `SkillNotFoundError` for an id that never existed, `SkillbookError` for a bad vector."""
        stale = None
        if computed_at_version is not None:
            stale = self._log.changed_since(computed_at_version, content_only=True)
        for skill_id in vectors:
            # A skill purged after the texts were read is stale, not a caller mistake.
            deleted_since = computed_at_version is not None and (stale is None or skill_id in stale)
            if skill_id not in self._skills and not deleted_since:
                raise SkillNotFoundError(skill_id)
        what = "" if kind == "search" else " (match)"
        arrays = {
            skill_id: as_embedding(vector, f"{skill_id!r}{what}")
            for skill_id, vector in vectors.items()
            if skill_id in self._skills
        }
        if computed_at_version is not None:
            arrays = {k: v for k, v in arrays.items() if stale is not None and k not in stale}
        return arrays

    # -- state, for storage backends and the journal -------------------------------------------

    def snapshot(self) -> SkillbookState:
        """Everything this skillbook holds, as one consistent state (what a store saves)."""
        with self._lock:
            return SkillbookState(
                dict(self._skills),
                dict(self._last_numbers),
                dict(self._similarity_decisions),
                {"search": self._embedding_model, "match": self._match_embedding_model},
            )

    def restore(self, state: SkillbookState) -> None:
        """Replace everything this skillbook holds with `state` (a store's load, a follower's full
        re-read); every id held before or after counts as changed."""
        with self._lock:
            changed = set(self._skills) | set(state.skills)
            self._skills = dict(state.skills)
            self._last_numbers = {section: state.last_numbers.get(section, 0) for section in SECTIONS}
            self._similarity_decisions = dict(state.similarity_decisions)
            self._embedding_model = state.embedding_models.get("search")
            self._match_embedding_model = state.embedding_models.get("match")
            self._order = None
            self._log.record(changed, content=True)

    def apply_changes(self, changes: SkillbookChanges) -> None:
        """Apply `changes` in place (a follower catching up with other writers, a journal undoing
        its session). The change log records which ids changed and whether their content (issue,
        insight, keywords, active) did, so indexes re-embed only new or edited texts."""
        with self._lock:
            content: set[str] = set()
            other: set[str] = set()
            for skill_id in changes.purged:
                if self._skills.pop(skill_id, None) is not None:
                    content.add(skill_id)
                    self._order = None
            for skill in changes.skills:
                old = self._skills.get(skill.id)
                if old is None:
                    self._order = None
                (content if old is None or _content(old) != _content(skill) else other).add(skill.id)
                self._skills[skill.id] = skill
            for pair, record in changes.decisions:
                if record is None:
                    self._similarity_decisions.pop(pair, None)
                else:
                    self._similarity_decisions[pair] = record
            if changes.last_numbers is not None:
                self._last_numbers = {section: changes.last_numbers.get(section, 0) for section in SECTIONS}
            if changes.embedding_models is not None:
                self._embedding_model = changes.embedding_models.get("search")
                self._match_embedding_model = changes.embedding_models.get("match")
            if other:
                self._log.record(other, content=False)
            if content or not other:
                self._log.record(content, content=True)

    def exclusive(self) -> AbstractContextManager[bool]:
        """Hold this skillbook's (re-entrant) lock for a block: no other thread reads or mutates it
        until the block ends. For a read-compute-write across several calls (a journal's rollback)."""
        return self._lock

    # -- internals -----------------------------------------------------------------------------

    def _require(self, skill_id: str) -> Skill:
        skill = self._skills.get(skill_id)
        if skill is None:
            raise SkillNotFoundError(skill_id)
        return skill

    def _store(self, skill: Skill, *, content: bool) -> Skill:
        if skill.id not in self._skills:
            self._order = None
        self._skills[skill.id] = skill
        self._log.record((skill.id,), content=content)
        return skill

    def _purge(self, skill: Skill) -> Skill:
        del self._skills[skill.id]
        self._order = None
        self._log.record((skill.id,), content=True)
        return skill


def _content(skill: Skill) -> tuple[Any, ...]:
    """What a change of makes an index re-embed the skill: its texts and whether it is listed."""
    return skill.issue, skill.insight, skill.keywords, skill.active
