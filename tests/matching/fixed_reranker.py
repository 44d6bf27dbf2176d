"""A reranker for tests that scores each skill by a fixed table, so a test decides what clears the floor."""

from __future__ import annotations

from collections.abc import Sequence

from ace.retrieval.rerankers import RerankCandidate


class ScoreById:
    """Scores each candidate by a fixed table (0.0 for skills not in it)."""

    name = "score-by-id"

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        return [self.scores.get(c.skill_id, 0.0) for c in candidates]
