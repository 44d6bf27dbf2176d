"""Model choice for the roles of an evaluation run, shared by `ace-eval e2e` and `ace-eval bench`.

- `add_role_model_flags` / `role_settings_from_args`: the `--<role>-model`, `--api-base`,
  `--api-key`, `--cache-prompts`, `--cache-ttl` and request flags (caps, temperature, timeout,
  extra request-body fields, context window), the same in every command that runs roles;
- `check_role_models`: offline and real models mixed, or a provider credential missing - before
  any model is called;
- `layered_settings`: a role's request settings from its default, the run-wide values and its own;
- `resolve_role_model`: a model string (or `scripted`) turned into a metered pydantic-ai model.

Light to import (argparse and the lazy `ace.models` names only), so a command line answers a bad
flag or a missing key before the roles load.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ace.cli import add_model_server_flags, add_request_flags
from ace.errors import UsageError
from ace_eval.scripted import SCRIPTED

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from ace.models import RequestSettings, UsageMeter

__all__ = [
    "OFFLINE_MODELS",
    "SCRIPTED",
    "ModelServer",
    "add_role_model_flags",
    "check_role_models",
    "layered_settings",
    "resolve_role_model",
    "role_settings_from_args",
]

OFFLINE_MODELS = frozenset({SCRIPTED, "test"})
"""Model names that are not language models: the scripted models and pydantic-ai's TestModel."""

_MODEL_HELP = (
    'model string (litellm "provider/name" or pydantic-ai "provider:name", e.g. openai/gpt-4.1-mini; '
    'with --api-base, openai/<served-name>), "scripted" (offline rule-based, default) or "test" '
    "(pydantic-ai TestModel)"
)


def add_role_model_flags(parser: argparse.ArgumentParser, roles: Sequence[str], *, everyone: str) -> None:
    """`--<role>-model` for each of `roles` (as they appear in flags: `agent`, `skill-manager`, ...;
    default `scripted`), the server flags and the request flags of `ace.cli.add_request_flags`."""
    for role in roles:
        parser.add_argument(f"--{role}-model", default=SCRIPTED, help=_MODEL_HELP)
    add_model_server_flags(parser, models="the non-scripted models")
    add_request_flags(parser, roles, everyone=everyone)


def role_settings_from_args(args: argparse.Namespace, roles: Sequence[str]) -> dict[str, RequestSettings]:
    """The per-role `--<role>-max-output-tokens` / `--<role>-temperature` / `--<role>-extra-body`
    values given, by role name (`skill_manager` for the `skill-manager` flags); roles with none of
    them are left out. Raises UsageError for a value out of range."""
    from ace.models import RequestSettings

    settings: dict[str, RequestSettings] = {}
    for role in roles:
        attribute = role.replace("-", "_")
        own = RequestSettings(
            max_output_tokens=getattr(args, f"{attribute}_max_output_tokens"),
            temperature=getattr(args, f"{attribute}_temperature"),
            extra_body=getattr(args, f"{attribute}_extra_body"),
        )
        if own != RequestSettings():
            settings[attribute] = own
    return settings


def check_role_models(models: Mapping[str, str], *, api_base: str | None, api_key: str | None) -> None:
    """Raise UsageError when these role -> model-string choices mix offline and real models (a
    scripted role's hand-written output next to a real model would look like learning), or - unless
    `api_base` or `api_key` is given (a local server, or a key) - when a real model's provider
    credential is not set, naming the variable and the role. Loads no model client."""
    from ace.models import ModelConfigurationError, check_credentials

    offline = [role for role, model in models.items() if model in OFFLINE_MODELS]
    real = [role for role in models if role not in offline]
    if offline and real:
        raise UsageError(
            f"the roles that run mix offline and real models: {_named(models, offline)} offline, "
            f"{_named(models, real)} real; give every running role a real model (or none), so that "
            "scripted advice is never reported as learning"
        )
    if api_base is not None or api_key is not None:
        return
    try:
        check_credentials({role.replace("_", " "): models[role] for role in real})
    except ModelConfigurationError as exc:
        raise UsageError(str(exc)) from None


def layered_settings(
    default: RequestSettings, *, everyone: RequestSettings, own: RequestSettings | None = None
) -> RequestSettings:
    """`default` overridden by the set fields of `everyone` (the run-wide flags), then by those of
    `own` (the role's flags). Raises UsageError for a value out of range."""
    settings = default.overridden(
        max_output_tokens=everyone.max_output_tokens,
        temperature=everyone.temperature,
        timeout_seconds=everyone.timeout_seconds,
        structured_output=everyone.structured_output,
        extra_body=everyone.extra_body,
    )
    if own is None:
        return settings
    return settings.overridden(
        max_output_tokens=own.max_output_tokens,
        temperature=own.temperature,
        timeout_seconds=own.timeout_seconds,
        extra_body=own.extra_body,
    )


@dataclasses.dataclass(frozen=True)
class ModelServer:
    """Where real models are served and how requests to them are marked (the server flags)."""

    api_base: str | None = None
    """Base URL of an OpenAI-compatible server, or None for each provider's own."""
    api_key: str | None = dataclasses.field(default=None, repr=False)
    """Key for `api_base` (kept out of `repr`: never printed or written)."""
    cache_prompts: bool = False
    """Mark static prompt prefixes for providers that cache only marked ones (Anthropic, Bedrock)."""
    cache_ttl: str | None = None
    """Lifetime of those cache entries (e.g. "5m"); None: the provider's default."""


def resolve_role_model(
    name: str, role: str, meter: UsageMeter, *, server: ModelServer, scripted: Callable[[], Model] | None = None
) -> Model:
    """The metered model `name` for `role`: `scripted()` when `name` is `scripted`, else
    `ace.models.resolve_model` with the server's settings. Raises UsageError naming the role's
    flag for a model string that cannot be resolved, or for `scripted` without a factory."""
    from ace.models import ModelResolutionError, metered, resolve_model

    flag = f"--{role.replace('_', '-')}-model"
    if name == SCRIPTED:
        if scripted is None:
            raise UsageError(f"{flag} scripted: this role has no scripted model here; give a real model")
        return metered(scripted(), meter)
    try:
        model = resolve_model(
            name,
            api_base=server.api_base,
            api_key=server.api_key,
            cache_prompts=server.cache_prompts,
            cache_ttl=server.cache_ttl,
        )
    except ModelResolutionError as exc:
        raise UsageError(f"{flag}: {exc}") from exc
    return metered(model, meter)


def _named(models: Mapping[str, str], roles: list[str]) -> str:
    return ", ".join(f"{role} ({models[role]})" for role in roles)
