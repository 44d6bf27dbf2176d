"""The `Embedder` protocol every vector producer in ace follows, and its error type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ace.errors import AceError

__all__ = ["Embedder", "EmbeddingError", "checked_embed", "normalise_rows"]


class EmbeddingError(AceError, RuntimeError):
    """Embedding texts failed (model error, provider error, malformed vectors).

    Raised by embedders and by retrieval when a query cannot be embedded; the original exception is
    chained as `__cause__`. Retrieval never falls back to lexical-only search on this error: fix the
    embedder (model file, credentials, network) or search with `mode="lexical"` explicitly.
    """


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors of one fixed vector space.

    `name` identifies the vector space: vectors made by embedders with different names are never
    compared or mixed (a skillbook records the name of the embedder that made its stored vectors).
    """

    @property
    def name(self) -> str:
        """Stable identifier of the model and its vector space, e.g. `"local/all-MiniLM-L6-v2-int8"`."""
        ...

    @property
    def dim(self) -> int:
        """Length of every vector `embed` returns."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed `texts` in order.

        Returns a `(len(texts), dim)` float32 array whose rows have L2 norm 1, so a dot product is a
        cosine similarity. An empty input returns a `(0, dim)` array. Raises `EmbeddingError`.
        """
        ...


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Return `vectors` (2-d) as float32 with every row scaled to L2 norm 1.

    Raises `EmbeddingError` if a row is all zeros or holds a non-finite value: such a row has no
    direction, and silently keeping it would make every cosine with it meaningless.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        raise EmbeddingError(f"expected a 2-d array of vectors, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    bad_rows = np.flatnonzero(~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0.0))
    if bad_rows.size:
        raise EmbeddingError(f"vector rows {bad_rows[:10].tolist()} are zero or non-finite and cannot be normalised")
    return matrix / norms


def checked_embed(embedder: Embedder, texts: Sequence[str], what: str) -> np.ndarray:
    """`embedder.embed(texts)`, verified: a `(len(texts), embedder.dim)` float32 array of unit rows.

    `what` names the texts in error messages (e.g. "the query 'refund'"). Raises `EmbeddingError`,
    with the embedder's own exception chained, when the embedder fails, returns another shape, or
    returns a zero or non-finite row (which would make every cosine with it the same).
    """
    try:
        vectors = embedder.embed(texts)
    except Exception as error:
        raise EmbeddingError(f"{embedder.name} could not embed {what}: {error}") from error
    expected = (len(texts), embedder.dim)
    if getattr(vectors, "shape", None) != expected:
        raise EmbeddingError(
            f"{embedder.name} returned shape {getattr(vectors, 'shape', None)} for {what}, expected {expected}"
        )
    return normalise_rows(vectors)
