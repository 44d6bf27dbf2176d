"""`CachedEmbedder`: an embedder whose vectors persist in a file, so texts are embedded once.

Superseded for the matcher: match vectors now live on the skills (`Skill.match_embedding`) in the
skillbook's `.embeddings.npz` sidecar, and `ace serve` / `ace match` use those. The only remaining
user is `ace mcp` (ace/mcp/_server.py); once it drops the cache as `ace serve` did, delete this
module and its test.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ace.atomic_write import write_atomic

from .embedder import Embedder

__all__ = ["CachedEmbedder", "match_vector_cache_path"]

logger = logging.getLogger("ace.retrieval")
_NAME_KEY = "__embedder__"


class CachedEmbedder:
    """`embed` answers known texts from a cache (keyed by the text's sha256) and embeds the rest
    with `inner` in one batch. `save()` writes the cache to `path` atomically when it grew.

    The file is only a cache: one made by another embedder (by `name`) or one that cannot be read
    is ignored (with a warning) and rewritten on the next `save()`. Thread-safe.
    """

    def __init__(self, inner: Embedder, path: str | Path) -> None:
        self.inner = inner
        """The embedder that computes vectors the cache does not hold."""
        self.path = Path(path)
        """The cache file (`.npz`)."""
        self._lock = threading.Lock()
        self._vectors = self._read()
        self._dirty = False

    @property
    def name(self) -> str:
        """The inner embedder's name: cached vectors live in its vector space."""
        return self.inner.name

    @property
    def dim(self) -> int:
        """The inner embedder's dimension."""
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for `texts`; errors of the inner embedder propagate unchanged."""
        keys = [_digest(text) for text in texts]
        with self._lock:
            missing = {key: text for key, text in zip(keys, texts) if key not in self._vectors}
        if missing:
            fresh = self.inner.embed(list(missing.values()))
            with self._lock:
                self._vectors.update(zip(missing, np.asarray(fresh, dtype=np.float32)))
                self._dirty = True
        with self._lock:
            return np.stack([self._vectors[key] for key in keys]) if keys else np.zeros((0, self.dim), np.float32)

    def save(self) -> None:
        """Write the cache to `path` (atomically) if it holds vectors the file does not."""
        with self._lock:
            if not self._dirty:
                return
            arrays = {_NAME_KEY: np.array(self.name), **self._vectors}
            self._dirty = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, lambda handle: np.savez(handle, **arrays))

    def _read(self) -> dict[str, np.ndarray]:
        if not self.path.exists():
            return {}
        try:
            with np.load(self.path, allow_pickle=False) as stored:
                if str(stored[_NAME_KEY]) != self.inner.name:
                    logger.warning("%s holds vectors of another embedder; recomputing them", self.path)
                    return {}
                return {key: stored[key] for key in stored.files if key != _NAME_KEY}
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
            logger.warning("embedding cache %s cannot be read (%s); recomputing it", self.path, error)
            return {}


def match_vector_cache_path(skillbook_path: str | Path) -> Path:
    """Where `ace mcp` keeps the matcher's vectors: `<stem>.match-vectors.npz` beside the skillbook
    file (a cache: delete it freely)."""
    path = Path(skillbook_path)
    return path.with_name(f"{path.stem}.match-vectors.npz")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
