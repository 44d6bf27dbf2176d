"""`EmbeddingBatcher`: texts that threads need embedded at the same time share one embedding call.

A thread that finds no call running embeds at once, with whatever texts are waiting: a lone request
never waits. Texts that arrive while a call runs wait for it to end and then go, together, in the
next call (at most `max_batch` texts; identical texts are embedded once). So the wait is bounded by
one call, and under load one call embeds many tasks: the model runs once over a batch instead of once
per task.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ace.errors import UsageError

from .embedder import Embedder, EmbeddingError, normalise_rows

__all__ = ["DEFAULT_MAX_BATCH", "EmbeddingBatcher"]

DEFAULT_MAX_BATCH = 16
"""Texts per shared call by default (the `LocalEmbedder`'s own batch size)."""


@dataclass(eq=False, slots=True)
class _Request:
    text: str
    what: str
    vector: np.ndarray | None = None
    error: EmbeddingError | None = None
    done: bool = field(default=False)


class EmbeddingBatcher:
    """Embeds one text per caller, callers on different threads sharing calls of `embedder`.

    Each caller gets exactly what `checked_embed(embedder, [text], what)[0]` gives it, as long as the
    embedder's vector for a text does not depend on the other texts of its call (true of
    `LocalEmbedder`, checked by the serving tests), and the same errors: when the embedder raises
    or returns the wrong shape, every caller of that call gets an `EmbeddingError` naming its own
    text, chaining the embedder's exception; a zero or non-finite row fails only the caller whose
    text it is.
    """

    def __init__(self, embedder: Embedder, *, max_batch: int = DEFAULT_MAX_BATCH) -> None:
        """Batch calls of `embedder`, at most `max_batch` (>= 1) texts each; raises `UsageError`."""
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise UsageError(f"max_batch must be an integer >= 1, got {max_batch!r}")
        self.embedder = embedder
        self.max_batch = max_batch
        """Most texts per call of the embedder."""
        self._waiting: list[_Request] = []
        self._running = False
        self._changed = threading.Condition()

    @property
    def pending(self) -> int:
        """Texts waiting for the next call (they arrived while one was running)."""
        with self._changed:
            return len(self._waiting)

    def embed(self, text: str, what: str) -> np.ndarray:
        """The unit vector of `text` (shape `(dim,)`); `what` names the text in errors (e.g. "the
        task 'refund'"). Raises `EmbeddingError`."""
        request = _Request(text, what)
        with self._changed:
            self._waiting.append(request)
        while True:
            with self._changed:
                while self._running and not request.done:
                    self._changed.wait()
                if request.done:
                    break
                self._running = True
                batch, self._waiting = self._waiting[: self.max_batch], self._waiting[self.max_batch :]
            self._run(batch)
        if request.vector is None:
            assert request.error is not None
            raise request.error
        return request.vector

    def _run(self, batch: list[_Request]) -> None:
        """Embed `batch` in one call, give each request its vector or error, and wake the waiters."""
        try:
            texts = list(dict.fromkeys(request.text for request in batch))
            try:
                vectors = self.embedder.embed(texts)
                shape = getattr(vectors, "shape", None)
                if shape != (len(texts), self.embedder.dim):
                    expected = (len(texts), self.embedder.dim)
                    raise EmbeddingError(f"returned shape {shape} for {len(texts)} texts, expected {expected}")
            except Exception as error:
                for request in batch:
                    request.error = EmbeddingError(f"{self.embedder.name} could not embed {request.what}: {error}")
                    request.error.__cause__ = error
                return
            rows = {text: row for row, text in enumerate(texts)}
            for request in batch:
                row = rows[request.text]
                try:
                    # One row at a time, as `checked_embed` normalises a single text's vector.
                    request.vector = normalise_rows(vectors[row : row + 1])[0]
                except EmbeddingError as error:
                    request.error = error
        finally:
            with self._changed:
                for request in batch:
                    if request.vector is None and request.error is None:  # the call was interrupted
                        request.error = EmbeddingError(
                            f"{self.embedder.name} could not embed {request.what}: the shared call was interrupted"
                        )
                    request.done = True
                self._running = False
                self._changed.notify_all()
