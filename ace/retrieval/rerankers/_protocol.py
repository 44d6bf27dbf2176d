"""The `Reranker` protocol: score a shortlist of skills against a task, each score in [0, 1]."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ace.errors import AceError

# One definition of the match text, beside `Skill.embedding_text()`; re-exported here for rerankers.
from ace.skillbook import match_text

__all__ = ["RerankCandidate", "RerankError", "Reranker", "match_text"]


class RerankError(AceError, RuntimeError):
    """A reranker could not score the shortlist (model file, provider, or malformed model output).

    The original exception is chained as `__cause__`. The matcher never falls back to the recall
    order on this error: fix the reranker (model path, credentials, network) or pass another one.
    """


@dataclass(frozen=True, slots=True)
class RerankCandidate:
    """One shortlisted skill with the recall stage's evidence."""

    skill_id: str
    """Id of the skill."""
    issue: str
    """The skill's issue: when it applies."""
    keywords: tuple[str, ...]
    """The skill's keywords."""
    similarity: float
    """Cosine similarity between the task and the skill's issue + keywords text (recall score)."""
    issue_overlap: float
    """IDF-weighted share of the issue's terms that the task contains, in [0, 1]."""
    keyword_overlap: float
    """IDF-weighted share of the keywords' terms that the task contains, in [0, 1]."""

    @property
    def text(self) -> str:
        """The matchable text of the skill (`match_text` of issue and keywords)."""
        return match_text(self.issue, self.keywords)


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each shortlisted skill applies to a task.

    Scores are comparable against one floor: 0.5 means "undecided", higher means the skill applies.
    """

    @property
    def name(self) -> str:
        """Short identifier of the reranker and its model, for logs and spans."""
        ...

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        """Score `candidates` for `task`: one float in [0, 1] per candidate, in input order.

        An empty `candidates` returns `[]`. Raises `RerankError`.
        """
        ...
