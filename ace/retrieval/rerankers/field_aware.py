"""`FieldAwareReranker`: the offline default — a calibrated logistic rescoring of the recall evidence.

No cross-encoder ships with its weights on a package registry, so the default cannot be one. This
reranker needs no model, key or network: it combines, per candidate, (1) the dense similarity of the
task to the skill's issue + keywords, (2) the smoothed IDF-weighted share of the issue's terms and
(3) of the keywords' terms that the task actually contains (`TermStatistics.coverage`), and (4) how
far the candidate trails the best dense match of the shortlist. A task that only *mentions* a
skill's topic shares one or two common terms and sits close to several skills at once; a task that *is about*
the skill's situation shares its rare terms (error
strings, tool names) and stands out from its neighbours. The five coefficients were fitted by logistic
regression on the matching tuning set (`benchmarks/matching_dev_eval.py --fit`), with the bias
shifted so that the tuned floor lands on 0.5: the floor with the best F1 among those that abstain on at
least 95% of the tuning tasks no skill fits (the matching contract's abstention target).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ._protocol import RerankCandidate

__all__ = ["DEFAULT_FIELD_WEIGHTS", "FieldAwareReranker", "FieldWeights"]


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """Coefficients of the logistic score
    `sigmoid(bias + similarity*s + issue_terms*i + keyword_terms*k + lag*g)`."""

    bias: float
    """Intercept; shifted so that 0.5 is the decision floor."""
    similarity: float
    """Weight of the dense cosine similarity (task vs. issue + keywords)."""
    issue_terms: float
    """Weight of the IDF-weighted share of the issue's terms found in the task."""
    keyword_terms: float
    """Weight of the IDF-weighted share of the keywords' terms found in the task."""
    lag: float
    """Weight of `similarity - best similarity in the shortlist` (<= 0)."""


DEFAULT_FIELD_WEIGHTS = FieldWeights(bias=-5.04, similarity=4.23, issue_terms=91.62, keyword_terms=5.64, lag=13.23)
"""Fitted on tests/data/matching/matching_dev.json only (see the module docstring)."""


class FieldAwareReranker:
    """Scores each candidate from its recall evidence; deterministic, about a microsecond per candidate."""

    name = "field-aware"

    def __init__(self, weights: FieldWeights = DEFAULT_FIELD_WEIGHTS) -> None:
        """Use `weights` (the fitted defaults unless you refit them on your own tuning set)."""
        self.weights = weights

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        """Score `candidates` in [0, 1]; `task` is already reflected in their evidence."""
        if not candidates:
            return []
        best = max(candidate.similarity for candidate in candidates)
        weights = self.weights
        return [
            _sigmoid(
                weights.bias
                + weights.similarity * candidate.similarity
                + weights.issue_terms * candidate.issue_overlap
                + weights.keyword_terms * candidate.keyword_overlap
                + weights.lag * (candidate.similarity - best)
            )
            for candidate in candidates
        ]


def _sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value))
