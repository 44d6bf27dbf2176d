"""Flags shared by the commands that run model roles (`ace learn`, `ace-eval e2e`, `ace-eval bench`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["add_model_server_flags", "add_request_flags", "positive_int"]


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def json_object(text: str) -> dict[str, Any]:
    """argparse type: a JSON object, e.g. '{"cache_prompt": false}'."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r} ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object ({{...}}), got {text!r}")
    return value


def add_model_server_flags(parser: argparse.ArgumentParser, *, models: str) -> None:
    """`--api-base`, `--api-key`, `--cache-prompts` and `--cache-ttl`: where `models` (e.g. "the
    non-scripted models") are served and how their static prompt prefixes are marked for caching."""
    parser.add_argument("--api-base", help=f"OpenAI-compatible server for {models}")
    parser.add_argument("--api-key", help="API key for --api-base")
    parser.add_argument(
        "--cache-prompts",
        action="store_true",
        help="mark static prompt prefixes for providers that need explicit cache markers (Anthropic, Bedrock)",
    )
    parser.add_argument("--cache-ttl", help='cache lifetime with --cache-prompts, e.g. "5m" or "1h"')


def add_request_flags(parser: argparse.ArgumentParser, roles: Sequence[str], *, everyone: str) -> None:
    """`--max-output-tokens`, `--temperature`, `--request-timeout`, `--structured-output`,
    `--extra-body`, `--context-window` for `everyone` (e.g. "every role"), and
    `--<role>-max-output-tokens` / `--<role>-temperature` / `--<role>-extra-body` per role (`roles`
    as they appear in flags: `reflector`, `skill-manager`, ...)."""
    parser.add_argument("--max-output-tokens", type=positive_int, help=f"output-token cap of {everyone}'s requests")
    parser.add_argument("--temperature", type=float, help=f"sampling temperature of {everyone} (default 0.0)")
    parser.add_argument("--request-timeout", type=float, help="seconds one request may take (default 300)")
    parser.add_argument(
        "--structured-output",
        choices=("tool", "native"),
        help="how the agent and the reflector ask for their structured answers: tool (an output tool call, "
        "the default) or native (the server's JSON-schema response format; llama-server and vLLM then hold a "
        "small model to the schema and its field length caps)",
    )
    parser.add_argument(
        "--extra-body",
        type=json_object,
        metavar="JSON",
        help=f"server-specific fields added to {everyone}'s request bodies, e.g. '{{\"cache_prompt\": false}}' "
        "(llama-server: answers at temperature 0 reproducible run to run); recorded in reports, never a credential",
    )
    parser.add_argument(
        "--context-window",
        type=positive_int,
        help="context window of the reflector and skill manager models, for a local alias litellm "
        "does not know (default: litellm's model information, else 8192)",
    )
    for role in roles:
        parser.add_argument(f"--{role}-max-output-tokens", type=positive_int, help=f"output-token cap of the {role}")
        parser.add_argument(f"--{role}-temperature", type=float, help=f"sampling temperature of the {role}")
        parser.add_argument(
            f"--{role}-extra-body",
            type=json_object,
            metavar="JSON",
            help=f"server-specific fields added to the {role}'s request bodies (replaces --extra-body for it)",
        )
