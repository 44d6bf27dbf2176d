"""Lexical evidence for task -> skill matching: the terms of a skill's fields and IDF-weighted
coverage. Terms come from the tokeniser BM25 search uses too (`_terms`), taken as sets here."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from . import _terms

__all__ = ["COVERAGE_PRIOR", "FieldTerms", "TermStatistics", "field_terms", "terms_of"]


def terms_of(text: str) -> frozenset[str]:
    """The distinct terms of `text` (the shared tokeniser, `_terms.terms_of`, as a set)."""
    return frozenset(_terms.terms_of(text))


@dataclass(frozen=True, slots=True)
class FieldTerms:
    """The terms of a skill's two matchable fields."""

    issue: frozenset[str]
    """Terms of the skill's issue text."""
    keywords: frozenset[str]
    """Terms of the skill's keywords (split on `_`)."""

    @property
    def all(self) -> frozenset[str]:
        """Terms of issue and keywords together."""
        return self.issue | self.keywords


def field_terms(issue: str, keywords: Iterable[str]) -> FieldTerms:
    """The `FieldTerms` of one skill's issue and keywords."""
    return FieldTerms(issue=terms_of(issue), keywords=terms_of(" ".join(keywords)))


COVERAGE_PRIOR = 40
"""Pseudo-terms of the rarest weight added to every field's IDF mass in `coverage` (see there); chosen
with the dev set's cross-validation and two stress tests (issues cut to 14 words, 1,000 synthetic
distractor skills) in `benchmarks/matching_dev_eval.py --fit`."""


class TermStatistics:
    """Document frequencies of terms over the indexed skills, and the coverage scores built on them.

    IDF is `log(1 + n / (df + 0.5))`: rare terms weigh more, and a term no indexed skill uses still
    gets a finite weight. Instances are immutable; build a new one when the indexed skills change.
    """

    def __init__(self, documents: Iterable[frozenset[str]]) -> None:
        """Count each document's distinct terms once."""
        counts: Counter[str] = Counter()
        size = 0
        for terms in documents:
            counts.update(terms)
            size += 1
        self._size = size
        self._idf: Mapping[str, float] = {term: self._idf_of(count) for term, count in counts.items()}
        self._unseen_idf = self._idf_of(0)

    def _idf_of(self, document_frequency: int) -> float:
        return math.log(1.0 + self._size / (document_frequency + 0.5))

    def idf(self, term: str) -> float:
        """Inverse document frequency of `term` among the indexed skills."""
        return self._idf.get(term, self._unseen_idf)

    def shared_weight(self, terms: frozenset[str], task_terms: frozenset[str]) -> float:
        """IDF mass of the `terms` that also appear in `task_terms`."""
        return sum(self.idf(term) for term in terms & task_terms)

    def coverage(self, terms: frozenset[str], task_terms: frozenset[str]) -> float:
        """Smoothed share of the IDF mass of `terms` that also appears in `task_terms`, in [0, 1).

        The mass shared is divided by the mass of `terms` plus COVERAGE_PRIOR rarest-term weights, so
        that a short field must share a lot before it counts as covered: without the prior, "book a
        30-minute call" covered a third of "the booking API times out after 30 seconds".
        """
        total = sum(self.idf(term) for term in terms)
        return self.shared_weight(terms, task_terms) / (total + COVERAGE_PRIOR * self._unseen_idf)

    def matched_field(self, fields: FieldTerms, task_terms: frozenset[str]) -> Literal["issue", "keywords"]:
        """The field that drove a match: `keywords` when the terms the task shares with the keywords
        weigh more (IDF mass) than those it shares with the issue — the task names the skill's topic
        labels rather than describing its situation — else `issue`, also when no term is shared (the
        match then came from the dense similarity of the description)."""
        keyword_weight = self.shared_weight(fields.keywords, task_terms)
        return "keywords" if keyword_weight > self.shared_weight(fields.issue, task_terms) else "issue"
