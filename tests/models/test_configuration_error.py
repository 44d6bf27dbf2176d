"""A missing or refused provider credential is one `ModelConfigurationError` naming what to set, and
a run whose every sample fails on it raises it."""

from __future__ import annotations

import litellm
import pytest
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace import ACE, Agent, Reflector, SkillManager
from ace.models import (
    KNOWN_PROVIDER_KEYS,
    ModelConfigurationError,
    check_credentials,
    missing_credentials,
    resolve_model,
)


async def test_a_refused_key_is_a_configuration_error_not_an_http_error(scripted_llm):
    scripted_llm.replies = [
        lambda messages: litellm.AuthenticationError(message="bad key", llm_provider="scripted", model="m")
    ]

    with pytest.raises(ModelConfigurationError, match="scripted/m: the provider refused the credentials .*bad key"):
        await PydanticAgent(resolve_model(scripted_llm.model_string)).run("hi")
    assert len(scripted_llm.calls) == 1  # refused once, not retried


def test_a_script_with_a_real_model_string_and_no_key_raises_the_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ace = ACE.from_roles(
        agent=Agent("openai/gpt-4.1-mini"),
        reflector=Reflector("openai/gpt-4.1-mini"),
        skill_manager=SkillManager("openai/gpt-4.1-mini"),
    )

    with pytest.raises(ModelConfigurationError) as raised:
        ace.run(["Which cabin classes can I upgrade to?", "Cancel my booking"])

    assert str(raised.value).startswith("OPENAI_API_KEY is not set for openai/gpt-4.1-mini; export it")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "second", [ModelConfigurationError("GROQ_API_KEY is not set"), RuntimeError("a flaky provider")]
)
def test_samples_failing_for_different_reasons_are_results_not_a_raised_error(second: Exception) -> None:
    errors = iter([ModelConfigurationError("OPENAI_API_KEY is not set"), second])

    def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise next(errors)

    ace = ACE.from_roles(
        agent=Agent(FunctionModel(fail)), reflector=Reflector("test"), skill_manager=SkillManager("test")
    )

    results = ace.run(["one question", "another question"])

    assert [type(result.error) for result in results] == [ModelConfigurationError, type(second)]


@pytest.mark.parametrize("provider", sorted(KNOWN_PROVIDER_KEYS))
def test_the_fast_credential_table_agrees_with_litellm(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for keys in KNOWN_PROVIDER_KEYS.values():
        for key in keys:
            monkeypatch.delenv(key, raising=False)
    model = f"{provider}/some-model"
    reported = litellm.validate_environment(model=model)["missing_keys"]

    assert missing_credentials(model) == [KNOWN_PROVIDER_KEYS[provider][0]]
    assert set(KNOWN_PROVIDER_KEYS[provider]) & set(reported) or reported == []
    for key in KNOWN_PROVIDER_KEYS[provider]:  # any one alternative satisfies both
        monkeypatch.setenv(key, "k")
        assert missing_credentials(model) == [] and litellm.validate_environment(model=model)["missing_keys"] == []
        monkeypatch.delenv(key)


def test_check_credentials_names_the_variable_and_the_role(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(
        ModelConfigurationError, match=r"^ANTHROPIC_API_KEY is not set for anthropic:claude-x \(the reflector model\)"
    ):
        check_credentials({"reflector": "anthropic:claude-x"})
