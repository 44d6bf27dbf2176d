"""`OnnxCrossEncoderReranker`: a cross-encoder (e.g. ms-marco-MiniLM, bge-reranker) exported to ONNX,
run offline from a local folder with onnxruntime + tokenizers.

Opt-in: no package registry ships cross-encoder weights today, so you export or copy a model folder
yourself (`model.onnx` or `onnx/model.onnx`, plus `tokenizer.json`). Nothing is fetched at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from ._protocol import RerankCandidate, RerankError

__all__ = ["OnnxCrossEncoderReranker"]

_MODEL_FILES = ("model.onnx", "onnx/model.onnx")
_TEXT_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxCrossEncoderReranker:
    """Scores (task, skill issue + keywords) pairs with a local ONNX cross-encoder.

    The model's first output is read as relevance: one logit per pair goes through a sigmoid; two
    logits per pair go through a softmax and the second class is "relevant". Thread-safe.
    """

    def __init__(self, model_dir: str | Path, *, max_length: int = 512, threads: int = 2) -> None:
        """Load `model_dir`'s ONNX model and `tokenizer.json`.

        Raises FileNotFoundError naming the folder when either file is missing, and RerankError when
        the model takes none of `input_ids`/`attention_mask`/`token_type_ids` or needs another input.
        """
        folder = Path(model_dir)
        model_path = next((folder / name for name in _MODEL_FILES if (folder / name).is_file()), None)
        if model_path is None:
            raise FileNotFoundError(f"no model.onnx or onnx/model.onnx in {folder}; export the cross-encoder there")
        tokenizer_path = folder / "tokenizer.json"
        if not tokenizer_path.is_file():
            raise FileNotFoundError(f"no tokenizer.json in {folder}; copy the model's fast tokenizer file there")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._inputs = [node.name for node in self._session.get_inputs()]
        unknown = sorted(set(self._inputs) - set(_TEXT_INPUTS))
        if unknown or "input_ids" not in self._inputs:
            raise RerankError(
                f"{model_path} takes inputs {self._inputs}; a cross-encoder needs input_ids and at most "
                f"{list(_TEXT_INPUTS[1:])}"
            )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding()
        self.name = f"onnx-cross-encoder/{folder.name}"

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        """Relevance of each candidate's issue + keywords to `task`, in [0, 1]. Raises RerankError."""
        if not candidates:
            return []
        try:
            encodings = self._tokenizer.encode_batch([(task, candidate.text) for candidate in candidates])
            columns = {
                "input_ids": [encoding.ids for encoding in encodings],
                "attention_mask": [encoding.attention_mask for encoding in encodings],
                "token_type_ids": [encoding.type_ids for encoding in encodings],
            }
            feed = {name: np.array(columns[name], dtype=np.int64) for name in self._inputs}
            logits = np.asarray(self._session.run(None, feed)[0], dtype=np.float64)
        except Exception as error:
            raise RerankError(f"{self.name} failed on {len(candidates)} pairs: {error}") from error
        return _relevance(logits, len(candidates), self.name)


def _relevance(logits: np.ndarray, pairs: int, name: str) -> list[float]:
    if logits.ndim == 2 and logits.shape[1] == 1:
        logits = logits[:, 0]
    if logits.shape == (pairs,):
        return (1.0 / (1.0 + np.exp(-logits))).tolist()
    if logits.shape == (pairs, 2):
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (shifted[:, 1] / shifted.sum(axis=1)).tolist()
    raise RerankError(
        f"{name} returned logits of shape {logits.shape} for {pairs} pairs; "
        f"expected ({pairs},), ({pairs}, 1) or ({pairs}, 2)"
    )
