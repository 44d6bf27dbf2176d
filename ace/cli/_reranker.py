"""`--reranker NAME [--reranker-model M]`: the rerank stage `ace match` and `ace serve` use.

Every reranker of `ace.retrieval.rerankers` can be chosen; each is imported only when chosen, so
the default (`field-aware`, offline) never loads an LLM client or onnxruntime.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ace.cli._app import CommandError

if TYPE_CHECKING:
    from ace.retrieval.rerankers import Reranker

__all__ = ["RERANKERS", "add_reranker_options", "reranker_from_args"]

RERANKERS: dict[str, str] = {
    "field-aware": "the offline default: a calibrated score of the recall evidence (no model)",
    "onnx-cross-encoder": "a local ONNX cross-encoder; --reranker-model is its folder (model.onnx + tokenizer.json)",
    "litellm": "a hosted rerank model through litellm; --reranker-model e.g. cohere/rerank-english-v3.0",
    "llm-judge": "a chat model's yes/no verdict per skill; --reranker-model e.g. openai/gpt-4.1-mini or test",
}
"""The rerankers `--reranker` accepts, with what each needs."""


def add_reranker_options(parser: argparse.ArgumentParser) -> None:
    """Add `--reranker`, `--reranker-model`, `--api-base` and `--api-key` to `parser`."""
    names = ", ".join(RERANKERS)
    parser.add_argument(
        "--reranker", default="field-aware", metavar="NAME", help=f"rerank stage: {names} (default field-aware)"
    )
    parser.add_argument(
        "--reranker-model",
        metavar="MODEL",
        help="the reranker's model: a folder for onnx-cross-encoder, a model string for litellm "
        "and llm-judge (see docs/agentic.md, Naming a model)",
    )
    parser.add_argument("--api-base", help="OpenAI-compatible server for the llm-judge or litellm reranker model")
    parser.add_argument("--api-key", help="API key for --api-base")


def reranker_from_args(args: argparse.Namespace) -> Reranker | None:
    """The reranker `args` choose (None: the matcher's default, field-aware). Raises `CommandError`
    (one line) for an unknown name, a missing or superfluous `--reranker-model`, or a model that
    cannot be loaded or named."""
    name, model = args.reranker, args.reranker_model
    if name not in RERANKERS:
        raise CommandError(f"unknown --reranker {name!r}; choose one of {', '.join(RERANKERS)}")
    if name == "field-aware":
        if model is not None or args.api_base is not None or args.api_key is not None:
            raise CommandError("--reranker field-aware takes no --reranker-model, --api-base or --api-key")
        return None
    if not model or not model.strip():
        raise CommandError(f"--reranker {name} needs --reranker-model ({RERANKERS[name].split('; ')[1]})")
    if name == "onnx-cross-encoder":
        return _onnx(model, args)
    from ace.models import ModelResolutionError, litellm_model_name
    from ace.retrieval.rerankers import LiteLLMReranker, LLMJudgeReranker

    if name == "litellm":
        options = {key: value for key, value in (("api_base", args.api_base), ("api_key", args.api_key)) if value}
        return LiteLLMReranker(litellm_model_name(model), **options)
    try:
        return LLMJudgeReranker(model, api_base=args.api_base, api_key=args.api_key)
    except ModelResolutionError as exc:
        raise CommandError(f"--reranker-model: {exc}") from None


def _onnx(model: str, args: argparse.Namespace) -> Reranker:
    if args.api_base is not None or args.api_key is not None:
        raise CommandError("--reranker onnx-cross-encoder runs locally; it takes no --api-base or --api-key")
    from ace.retrieval.rerankers import OnnxCrossEncoderReranker, RerankError

    try:
        return OnnxCrossEncoderReranker(model)
    except (FileNotFoundError, RerankError) as exc:
        raise CommandError(f"--reranker-model: {exc}") from None
