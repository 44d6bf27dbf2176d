"""One model-string convention: litellm's `provider/name` and pydantic-ai's `provider:name` name the same model."""

from __future__ import annotations

import litellm
import pytest

from ace.models import PYDANTIC_AI_PROVIDERS, RequestSettings, litellm_model_name


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("openai:gpt-4.1-mini", "openai/gpt-4.1-mini"),
        ("anthropic:claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ("google-gla:gemini-2.5-flash", "gemini/gemini-2.5-flash"),
        ("google-vertex:gemini-2.5-pro", "vertex_ai/gemini-2.5-pro"),
        ("ollama:llama3.1:8b", "ollama/llama3.1:8b"),
        ("openrouter:anthropic/claude-3.5-sonnet", "openrouter/anthropic/claude-3.5-sonnet"),
        ("openai/gpt-4.1-mini", "openai/gpt-4.1-mini"),
        ("bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0", "bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0"),
        ("  gpt-4o ", "gpt-4o"),
        ("test", "test"),
    ],
)
def test_litellm_model_name_maps_pydantic_ai_names_and_keeps_litellm_names(given: str, expected: str) -> None:
    assert litellm_model_name(given) == expected


@pytest.mark.parametrize("litellm_provider", sorted(set(PYDANTIC_AI_PROVIDERS.values())))
def test_every_mapped_provider_is_a_litellm_provider(litellm_provider: str) -> None:
    assert litellm_provider in litellm.provider_list


def test_a_seed_in_request_settings_is_sent_as_the_model_setting_seed() -> None:
    assert RequestSettings(seed=7).model_settings() == {"seed": 7}
    assert RequestSettings(temperature=0.0).overridden(seed=3).model_settings() == {"temperature": 0.0, "seed": 3}


def test_a_seed_that_is_not_an_int_is_rejected() -> None:
    with pytest.raises(ValueError, match="seed must be None or an int"):
        RequestSettings(seed="7")  # type: ignore[arg-type]


def test_structured_output_chooses_how_a_role_asks_for_its_answer() -> None:
    from pydantic_ai import NativeOutput

    assert RequestSettings().output_type(dict) is dict
    assert RequestSettings(structured_output="tool").output_type(dict) is dict
    native = RequestSettings(structured_output="native").output_type(dict)
    assert isinstance(native, NativeOutput) and native.outputs is dict
    assert RequestSettings(structured_output="native").overridden(temperature=0.0).structured_output == "native"
    with pytest.raises(ValueError, match="structured_output must be"):
        RequestSettings(structured_output="json")  # type: ignore[arg-type]
