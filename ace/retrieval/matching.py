"""`SkillMatcher`: which few active skills apply to a task (recall -> rerank -> floor), or none.

A skill is matched on its issue and keywords — the fields that say *when* it applies — never on its
insight. Recall takes the `shortlist_size` skills whose issue + keywords text is closest to the task
(dense cosine); the reranker scores that shortlist against the task in [0, 1]; skills below the floor
are dropped, so the common answer, "nothing applies", is `[]`. Equal scores sort by skill id.

A skill with counterexamples (`Skill.counterexample_questions`: tasks it made the agent get wrong,
which the agent got right without it) is withheld from a task that shares more of the terms only
its counterexamples have than of the terms only the questions it was learned from have
(`Skill.learned_from_questions`; its issue + keywords when it has none). A neighbour differs from
the skill's own cases in a few words ("bought at the regular price" against "bought in the
clearance sale"); those words, not the many it shares, tell it apart. Dense similarity cannot:
it is dominated by what the questions share.
"""

from __future__ import annotations

import dataclasses
import numbers
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ace import tracing
from ace.errors import UsageError
from ace.skillbook import skill_id_order

from ._matching_index import (
    MatchableSkillbook,
    MatchEntry,
    MatchSnapshot,
    empty_snapshot,
    refresh_snapshot,
)
from ._matching_terms import terms_of
from .embedder import Embedder, checked_embed
from .embedding_batcher import EmbeddingBatcher
from .local_embedder import default_embedder
from .rerankers import FieldAwareReranker, RerankCandidate, Reranker, RerankError
from .task_vector_cache import TaskVectorCache

__all__ = [
    "DEFAULT_FLOOR",
    "DEFAULT_SHORTLIST_SIZE",
    "MatchExplanation",
    "MatchableSkillbook",
    "SkillMatch",
    "SkillMatcher",
]

DEFAULT_FLOOR = 0.5
"""Rerank score a skill needs to be returned. Calibrated for the default `FieldAwareReranker` (and
the LLM judge's yes/no midpoint); retune it for a cross-encoder or a hosted rerank model."""

DEFAULT_SHORTLIST_SIZE = 20
"""Skills recalled per task before reranking."""

_SCORE_DECIMALS = 6  # rounding makes identical skills tie exactly, whatever the float noise


@dataclass(frozen=True, slots=True)
class SkillMatch:
    """A skill scored against a task, with the evidence: a match (score at least the floor) or, in
    `MatchExplanation.near_misses`, a shortlisted skill the floor kept out."""

    skill_id: str
    """Id of the scored skill."""
    score: float
    """Rerank score in [0, 1]; at least the matcher's floor for a match, below it for a near miss."""
    matched_on: Literal["issue", "keywords"]
    """The field that drove the match, `issue` or `keywords` (rule: `TermStatistics.matched_field`)."""
    section: str
    """The skill's section."""
    keywords: tuple[str, ...]
    """The skill's keywords."""
    issue: str
    """The skill's issue."""


@dataclass(frozen=True, slots=True)
class MatchExplanation:
    """Why a task got the skills it got: the matches, and the shortlisted skills under the floor."""

    matches: tuple[SkillMatch, ...]
    """What `SkillMatcher.match` returns for the same task and limit, best first."""
    near_misses: tuple[SkillMatch, ...]
    """Shortlisted skills whose rerank score is below the floor, best first (ties by skill id)."""
    withheld: tuple[SkillMatch, ...]
    """Skills at or above the floor withheld because the task is more like their counterexamples
    than like the questions they were learned from (see the module docstring), best first."""
    above_limit: int
    """Skills at or above the floor, not withheld, that `limit` cut off."""
    floor: float
    """The score a skill needs to match."""
    shortlist_size: int
    """Skills recalled (and reranked) for this task."""


class SkillMatcher:
    """Matches tasks to the active skills of one skillbook; thread-safe.

    The index (issue + keywords vectors and terms of active skills) is built on first use and then
    follows the skillbook: before each match it compares `skillbook.version` with the indexed one and
    re-reads only the skills in `changed_ids_since`, embedding only new or edited texts. It is never
    rebuilt per request.

    A server gives it a `task_cache` (a repeated task is not embedded again) and `batch_tasks=True`
    (tasks matched at the same time on different threads share one embedding call); either way the
    answer for a task is the one an uncached matcher gives, to the byte.
    """

    def __init__(
        self,
        skillbook: MatchableSkillbook,
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        floor: float | None = None,
        shortlist_size: int = DEFAULT_SHORTLIST_SIZE,
        task_cache: TaskVectorCache | None = None,
        batch_tasks: bool = False,
    ) -> None:
        """Bind the matcher to `skillbook` (a `Skillbook` or its view).

        `embedder` defaults to `default_embedder()` (offline MiniLM), `reranker` to
        `FieldAwareReranker()`, `floor` to `DEFAULT_FLOOR`. `task_cache` holds the vectors of tasks
        already embedded (none by default: every task is embedded); `batch_tasks` lets concurrent
        matches share embedding calls (`EmbeddingBatcher`). Raises ValueError for a floor outside
        [0, 1] or a shortlist size below 1. Nothing is embedded until the first match.
        """
        floor = DEFAULT_FLOOR if floor is None else floor
        # numbers.Real admits numpy scalars; float(...) gives the checker (and the matcher) a float.
        if (
            isinstance(floor, bool)
            or not isinstance(floor, (int, float, numbers.Real))
            or not 0.0 <= float(floor) <= 1.0
        ):
            raise UsageError(f"floor must be a number within [0, 1], got {floor!r}")
        if isinstance(shortlist_size, bool) or not isinstance(shortlist_size, int) or shortlist_size < 1:
            raise UsageError(f"shortlist_size must be an integer >= 1, got {shortlist_size!r}")
        self.embedder = embedder if embedder is not None else default_embedder()
        self.reranker = reranker if reranker is not None else FieldAwareReranker()
        self.floor = float(floor)
        self.shortlist_size = shortlist_size
        self.task_cache = task_cache
        """The vectors of tasks already embedded, or None."""
        self._batcher = EmbeddingBatcher(self.embedder) if batch_tasks else None
        self._skillbook = skillbook
        self._snapshot = empty_snapshot(self.embedder.dim)
        self._refresh_lock = threading.Lock()

    @property
    def skillbook(self) -> MatchableSkillbook:
        """The skillbook (or view) this matcher follows."""
        return self._skillbook

    def rebind(self, skillbook: MatchableSkillbook) -> None:
        """Follow another skillbook object (e.g. the same file, reloaded), reusing every vector whose
        text is unchanged. Raises `EmbeddingError` if embedding the new texts fails."""
        with self._refresh_lock:
            stale = dataclasses.replace(self._snapshot, version=None)
            self._snapshot = refresh_snapshot(stale, skillbook, self.embedder)
            self._skillbook = skillbook

    def refresh(self) -> None:
        """Bring the index up to the skillbook's current version (match calls this itself)."""
        if self._snapshot.version == self._skillbook.version:
            return
        with self._refresh_lock:
            self._snapshot = refresh_snapshot(self._snapshot, self._skillbook, self.embedder)

    def shortlist(self, task: str) -> list[RerankCandidate]:
        """The recall stage alone: up to `shortlist_size` candidates, best dense similarity first.

        Raises ValueError for a blank task and `EmbeddingError` when the task cannot be embedded.
        """
        task = _checked_task(task)
        snapshot = self._current()
        query = self._task_vector(task) if snapshot.entries else None
        return [candidate for _, candidate in self._recall(query, terms_of(task), snapshot)]

    def match(self, task: str, limit: int = 3) -> list[SkillMatch]:
        """The at most `limit` active skills that apply to `task`, best first; `[]` when none does.

        Raises ValueError for a blank task or a limit below 1, `EmbeddingError` when the task cannot
        be embedded and `RerankError` when the reranker fails or returns invalid scores.
        """
        return list(self.explain(task, limit=limit).matches)

    def explain(self, task: str, limit: int = 3) -> MatchExplanation:
        """`match`, with the evidence around it: the shortlisted skills the floor kept out (near
        misses, with their scores), how many matches `limit` cut off, the floor and the shortlist
        size. Raises what `match` raises."""
        task = _checked_task(task)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise UsageError(f"limit must be an integer >= 1, got {limit!r}")
        snapshot = self._current()
        with tracing.memory_span("search_memory", "MATCH", reranker=self.reranker.name, limit=limit) as span:
            task_terms = terms_of(task)
            query = self._task_vector(task) if snapshot.entries else None
            shortlisted = self._recall(query, task_terms, snapshot)
            candidates = [candidate for _, candidate in shortlisted]
            scores = _checked_scores(self.reranker, self.reranker.rerank(task, candidates), len(candidates))
            ranked = [
                SkillMatch(
                    skill_id=entry.skill.id,
                    score=score,
                    matched_on=snapshot.statistics.matched_field(entry.terms, task_terms),
                    section=entry.skill.section,
                    keywords=entry.skill.keywords,
                    issue=entry.skill.issue,
                )
                for score, (entry, _) in sorted(
                    zip(scores, shortlisted), key=lambda pair: (-pair[0], skill_id_order(pair[1][0].skill.id))
                )
            ]
            above_floor = [scored for scored in ranked if scored.score >= self.floor]
            withheld = [scored for scored in above_floor if self._withheld(scored.skill_id, task_terms)]
            withheld_ids = {scored.skill_id for scored in withheld}
            applying = [scored for scored in above_floor if scored.skill_id not in withheld_ids]
            matches = tuple(applying[:limit])
            span.set_attribute("shortlist_size", len(candidates))
            if withheld:
                span.set_attribute("withheld_skill_ids", [scored.skill_id for scored in withheld])
            span.set_attributes(
                {tracing.SKILL_IDS: [match.skill_id for match in matches], tracing.MEMORY_RECORD_COUNT: len(matches)}
            )
        return MatchExplanation(
            matches=matches,
            near_misses=tuple(scored for scored in ranked if scored.score < self.floor),
            withheld=tuple(withheld),
            above_limit=len(applying) - len(matches),
            floor=self.floor,
            shortlist_size=len(candidates),
        )

    def _current(self) -> MatchSnapshot:
        self.refresh()
        return self._snapshot

    def _recall(
        self, query: np.ndarray | None, task_terms: frozenset[str], snapshot: MatchSnapshot
    ) -> list[tuple[MatchEntry, RerankCandidate]]:
        if query is None or not snapshot.entries:
            return []
        # einsum stays single-threaded; `matrix @ vector` wakes multi-threaded BLAS, whose spinning
        # workers cost more CPU than the product itself at this size.
        similarities = np.einsum("ij,j->i", snapshot.vectors, query)
        rows = np.arange(len(snapshot.entries))
        if self.shortlist_size < len(rows):
            best = np.argpartition(-similarities, self.shortlist_size - 1)[: self.shortlist_size]
            # Keep every skill tied at the cut, so the id order (not partition order) decides ties.
            rows = np.flatnonzero(similarities >= similarities[best].min())
        coverage = snapshot.statistics.coverage
        shortlisted = []
        for row in rows:
            entry = snapshot.entries[row]
            candidate = RerankCandidate(
                skill_id=entry.skill.id,
                issue=entry.skill.issue,
                keywords=entry.skill.keywords,
                similarity=round(float(similarities[row]), _SCORE_DECIMALS),
                issue_overlap=round(coverage(entry.terms.issue, task_terms), _SCORE_DECIMALS),
                keyword_overlap=round(coverage(entry.terms.keywords, task_terms), _SCORE_DECIMALS),
            )
            shortlisted.append((entry, candidate))
        shortlisted.sort(key=lambda pair: (-pair[1].similarity, skill_id_order(pair[1].skill_id)))
        return shortlisted[: self.shortlist_size]

    def _withheld(self, skill_id: str, task_terms: frozenset[str]) -> bool:
        """Whether a task of `task_terms` shares more terms only the skill's counterexamples have than
        terms only its learned-from questions have (the skill as stored now: a TAG does not re-index)."""
        skill = self._skillbook.get_skill(skill_id)
        if skill is None or not skill.counterexample_questions:
            return False
        learned_from = _terms_of_all(skill.learned_from_questions or (skill.match_text(),))
        counterexamples = _terms_of_all(skill.counterexample_questions)
        return len(task_terms & (counterexamples - learned_from)) > len(task_terms & (learned_from - counterexamples))

    def _task_vector(self, task: str) -> np.ndarray:
        """The task's unit vector: from the cache, else embedded (through the batcher when there is one)."""
        model = self.embedder.name
        if self.task_cache is not None:
            cached = self.task_cache.get(model, task)
            if cached is not None:
                return cached
        what = f"the task {task[:80]!r}"
        if self._batcher is not None:
            vector = self._batcher.embed(task, what)
        else:
            vector = checked_embed(self.embedder, [task], what)[0]
        if self.task_cache is not None:
            self.task_cache.put(model, task, vector)
        return vector


def _terms_of_all(texts: Sequence[str]) -> frozenset[str]:
    return frozenset().union(*map(terms_of, texts))


def _checked_task(task: str) -> str:
    if not isinstance(task, str) or not task.strip():
        raise UsageError(f"task must be a non-empty string, got {task!r}")
    return task.strip()


def _checked_scores(reranker: Reranker, scores: Sequence[float], expected: int) -> list[float]:
    scores = list(scores)
    if len(scores) != expected:
        raise RerankError(f"reranker {reranker.name!r} returned {len(scores)} scores for {expected} candidates")
    checked: list[float] = []
    for score in scores:
        # numbers.Real admits numpy scalars (a model's float32 output); a bool is no score.
        if (
            isinstance(score, bool)
            or not isinstance(score, (int, float, numbers.Real))
            or not 0.0 <= float(score) <= 1.0
        ):
            raise RerankError(f"reranker {reranker.name!r} returned score {score!r}, expected a float in [0, 1]")
        checked.append(round(float(score), _SCORE_DECIMALS))
    return checked
