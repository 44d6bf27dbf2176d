"""`LiteLLMReranker`: a hosted rerank model (Cohere, Jina, Voyage, ...) through `litellm.rerank`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._protocol import RerankCandidate, RerankError

__all__ = ["LiteLLMReranker"]


class LiteLLMReranker:
    """Sends the task as the query and each candidate's issue + keywords as a document.

    Needs the provider's key (e.g. `COHERE_API_KEY`) and network. The provider's `relevance_score`
    is used as the score; the matcher's default floor (0.5) was calibrated for the offline default,
    so retune it for your provider.
    """

    def __init__(self, model: str, *, rerank: Callable[..., Any] | None = None, **options: Any) -> None:
        """Use litellm model `model` (e.g. `"cohere/rerank-english-v3.0"`).

        `rerank` replaces `litellm.rerank` (same keyword arguments and response shape), for tests or a
        proxy client; `options` (e.g. `api_base`, `api_key`) are passed to every call.
        """
        self.model = model
        self.name = f"litellm/{model}"
        self._rerank = rerank
        self._options = options

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        """The provider's relevance score of each candidate, in input order. Raises RerankError when
        the call fails or the response misses a candidate or holds a score outside [0, 1]."""
        if not candidates:
            return []
        call = self._rerank if self._rerank is not None else _litellm_rerank()
        try:
            response = call(
                model=self.model,
                query=task,
                documents=[candidate.text for candidate in candidates],
                top_n=len(candidates),
                **self._options,
            )
        except Exception as error:
            raise RerankError(f"{self.name} rerank call failed: {error}") from error
        return _scores_from(response, len(candidates), self.name)


def _litellm_rerank() -> Callable[..., Any]:
    from ace.models.configured_litellm import litellm  # on first use: it takes seconds to load

    return litellm.rerank


def _field(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, dict) else getattr(item, name)


def _scores_from(response: Any, expected: int, name: str) -> list[float]:
    scores: list[float | None] = [None] * expected
    try:
        for result in _field(response, "results"):
            index = int(_field(result, "index"))
            # A negative index would silently score the last candidates; a repeated one would
            # overwrite an earlier score.
            if not 0 <= index < expected or scores[index] is not None:
                raise ValueError(f"result index {index} is out of range or repeated for {expected} documents")
            scores[index] = float(_field(result, "relevance_score"))
    except (KeyError, AttributeError, IndexError, TypeError, ValueError) as error:
        raise RerankError(f"{name} returned a malformed rerank response: {error!r}") from error
    found = [score for score in scores if score is not None]
    if len(found) != len(scores):
        missing = [index for index, score in enumerate(scores) if score is None]
        raise RerankError(f"{name} returned no score for candidates {missing}")
    out_of_range = [score for score in found if not 0.0 <= score <= 1.0]
    if out_of_range:
        raise RerankError(
            f"{name} returned scores {out_of_range} outside [0, 1]; use a model that reports relevance in [0, 1]"
        )
    return found
