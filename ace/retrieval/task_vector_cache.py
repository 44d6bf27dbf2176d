"""`TaskVectorCache`: the vectors of task texts already embedded, so a repeated task is not embedded
again. Bounded by entries and by bytes, least recently used first out, for one embedding model at a
time: a lookup or store for another model empties it first, so a vector is only ever served to the
model that made it.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from ace.errors import UsageError

__all__ = ["DEFAULT_CACHE_BYTES", "DEFAULT_CACHE_ENTRIES", "TaskVectorCache"]

DEFAULT_CACHE_ENTRIES = 16_384
"""Task vectors kept by default (about 30 MB of 384-d vectors: a day of a busy server's repeats)."""

DEFAULT_CACHE_BYTES = 32 * 2**20
"""Bytes of task vectors (and their keys) kept by default."""

_KEY_BYTES = 32
_ENTRY_OVERHEAD = 240
"""Bytes an entry costs beyond its vector's data and key digest (the array and key objects and the
ordered dict's node, measured with tracemalloc on CPython 3.11), counted so that `max_bytes` bounds
the memory the cache really holds."""


class TaskVectorCache:
    """Task text -> unit vector of one embedding model; least recently used out; thread-safe.

    A key is the model's name and a 256-bit BLAKE2b digest of the task text exactly as it is embedded
    (`SkillMatcher` strips surrounding whitespace first; nothing else is normalised, so a cached
    vector is the one embedding that text would give). Holding a digest, not the text, keeps an entry
    the same size whatever the task's length. Vectors are stored as read-only copies.
    """

    def __init__(self, max_entries: int = DEFAULT_CACHE_ENTRIES, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        """Keep at most `max_entries` vectors taking at most `max_bytes` (both >= 1; raises `UsageError`)."""
        for name, value in (("max_entries", max_entries), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be an integer >= 1, got {value!r}")
        self.max_entries = max_entries
        """Most vectors held."""
        self.max_bytes = max_bytes
        """Most bytes held, counting each vector's data, its key and the entry's own objects."""
        self._model: str | None = None
        self._vectors: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def model(self) -> str | None:
        """The embedding model whose vectors are held; None before the first store."""
        return self._model

    def __len__(self) -> int:
        return len(self._vectors)

    @property
    def nbytes(self) -> int:
        """Bytes held now (at most `max_bytes`)."""
        return self._bytes

    def get(self, model: str, text: str) -> np.ndarray | None:
        """The vector `model` gave `text`, or None when it is not held (an entry for another model
        never is: asking for another model empties the cache)."""
        key = _key(text)
        with self._lock:
            self._use_model(model)
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
            return vector

    def put(self, model: str, text: str, vector: np.ndarray) -> None:
        """Hold `vector` as what `model` gives `text`, evicting the least recently used entries to stay
        within both bounds (a vector larger than `max_bytes` alone is not held)."""
        key = _key(text)
        stored = np.array(vector, dtype=np.float32, copy=True)
        stored.setflags(write=False)
        size = _entry_bytes(stored)
        with self._lock:
            self._use_model(model)
            previous = self._vectors.pop(key, None)
            if previous is not None:
                self._bytes -= _entry_bytes(previous)
            if size > self.max_bytes:
                return
            self._vectors[key] = stored
            self._bytes += size
            while len(self._vectors) > self.max_entries or self._bytes > self.max_bytes:
                _, evicted = self._vectors.popitem(last=False)
                self._bytes -= _entry_bytes(evicted)

    def clear(self) -> None:
        """Drop every vector."""
        with self._lock:
            self._vectors.clear()
            self._bytes = 0

    def _use_model(self, model: str) -> None:
        if model != self._model:
            self._vectors.clear()
            self._bytes = 0
            self._model = model


def _key(text: str) -> bytes:
    # surrogatepass: a lone surrogate (which no front door lets through) still has one key.
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_KEY_BYTES).digest()


def _entry_bytes(vector: np.ndarray) -> int:
    return vector.nbytes + _KEY_BYTES + _ENTRY_OVERHEAD
