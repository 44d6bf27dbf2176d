"""Flags shared by the commands that run model roles (`ace learn`, `ace-eval e2e`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = ["add_request_flags", "positive_int"]


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_request_flags(parser: argparse.ArgumentParser, roles: Sequence[str], *, everyone: str) -> None:
    """`--max-output-tokens`, `--temperature`, `--request-timeout`, `--context-window` for `everyone`
    (e.g. "every role"), and `--<role>-max-output-tokens` / `--<role>-temperature` per role
    (`roles` as they appear in flags: `reflector`, `skill-manager`, ...)."""
    parser.add_argument("--max-output-tokens", type=positive_int, help=f"output-token cap of {everyone}'s requests")
    parser.add_argument("--temperature", type=float, help=f"sampling temperature of {everyone} (default 0.0)")
    parser.add_argument("--request-timeout", type=float, help="seconds one request may take (default 300)")
    parser.add_argument(
        "--context-window",
        type=positive_int,
        help="context window of the reflector and skill manager models, for a local alias litellm "
        "does not know (default: litellm's model information, else 8192)",
    )
    for role in roles:
        parser.add_argument(f"--{role}-max-output-tokens", type=positive_int, help=f"output-token cap of the {role}")
        parser.add_argument(f"--{role}-temperature", type=float, help=f"sampling temperature of the {role}")
