"""Which credential a model string needs that the environment lacks, answered fast.

For the providers most people use, the environment variables are known here, so a missing key is
reported without importing litellm (seconds); every other provider is asked through
`litellm.validate_environment`. A test checks the table against litellm.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ace.models._errors import ModelConfigurationError
from ace.models._names import litellm_model_name

__all__ = ["KNOWN_PROVIDER_KEYS", "check_credentials", "credential_message", "missing_credentials"]

KNOWN_PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
}
"""Provider -> the environment variables litellm reads its key from; any one of them will do."""

_AWS_KEYS = frozenset({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"})


def missing_credentials(model: str) -> list[str]:
    """The environment variables `model` (a litellm or pydantic-ai model string) needs that are not
    set: for a known provider the first of its alternatives (none when any is set); otherwise what
    `litellm.validate_environment` reports, without API bases (they have defaults) and without AWS
    keys when an AWS profile is configured."""
    name = litellm_model_name(model)
    provider, slash, _ = name.partition("/")
    alternatives = KNOWN_PROVIDER_KEYS.get(provider) if slash else None
    if alternatives is not None:
        return [] if any(os.environ.get(key) for key in alternatives) else [alternatives[0]]
    from ace.models.configured_litellm import litellm  # only for providers the table does not know: it takes seconds

    missing = litellm.validate_environment(model=name).get("missing_keys") or []
    missing = [key for key in missing if not key.endswith(("_API_BASE", "_BASE_URL", "_HOST"))]
    if _AWS_KEYS & set(missing) and _aws_profile_configured():
        missing = [key for key in missing if key not in _AWS_KEYS]
    return missing


def credential_message(model: str, missing: list[str], role: str | None = None) -> str:
    """One line naming what to set for `model` (the model of `role`, when given)."""
    verb = "is" if len(missing) == 1 else "are"
    used_by = f" (the {role} model)" if role else ""
    return (
        f"{' and '.join(missing)} {verb} not set for {model}{used_by}; export it, or pass api_key / "
        "api_base (--api-key / --api-base on the command line)"
    )


def check_credentials(models: Mapping[str, str]) -> None:
    """Raise `ModelConfigurationError` for the first of `models` (`{what it is for: model string}`,
    e.g. `{"reflector": "openai/gpt-4.1-mini"}`) whose credential is not set, naming the variable
    and the role. Give only models that reach a provider (not "test", not a local api_base)."""
    for role, model in models.items():
        missing = missing_credentials(model)
        if missing:
            raise ModelConfigurationError(credential_message(model, missing, role))


def _aws_profile_configured() -> bool:
    if os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE"):
        return True
    home = Path.home() / ".aws"
    return (home / "credentials").exists() or (home / "config").exists()
