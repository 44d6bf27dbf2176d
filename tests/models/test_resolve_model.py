"""resolve_model: names and instances become pydantic-ai models; litellm strings run through litellm offline."""

from __future__ import annotations

import json

import litellm
import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition

from ace.models import ModelResolutionError, resolve_model


def _text_reply(text: str, prompt_tokens: int = 11, completion_tokens: int = 7):
    return lambda messages: {
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _tool_call_reply(name: str, arguments: dict, call_id: str = "call_1"):
    return lambda messages: {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


def test_test_string_resolves_to_pydantic_ai_test_model():
    assert isinstance(resolve_model("test"), TestModel)


def test_model_instance_is_returned_unchanged():
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("x")]))
    assert resolve_model(model) is model


def test_api_base_with_model_instance_is_rejected_not_ignored():
    with pytest.raises(ModelResolutionError, match="api_base"):
        resolve_model(TestModel(), api_base="http://127.0.0.1:8080/v1")


def test_api_base_with_the_test_model_is_rejected_not_ignored():
    with pytest.raises(ModelResolutionError, match="api_base"):
        resolve_model("test", api_base="http://127.0.0.1:8080/v1")


@pytest.mark.parametrize("bad", ["nosuchprovider/some-model", "definitely-not-a-model", "openai/", ""])
def test_invalid_model_string_error_names_it_and_shows_examples(bad: str):
    with pytest.raises(ModelResolutionError) as excinfo:
        resolve_model(bad)
    message = str(excinfo.value)
    assert repr(bad) in message
    assert "openai/gpt-4.1-mini" in message


@pytest.mark.parametrize(
    "name",
    [
        "openai/gpt-4.1-mini",
        "anthropic/claude-sonnet-4-5",
        "bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0",
        "ollama/llama3.1",
        "gpt-4o",
    ],
)
def test_litellm_provider_strings_resolve_to_a_model_named_after_them(name: str):
    assert resolve_model(name).model_name == name


async def test_text_reply_and_usage_come_back_through_litellm_mock_response():
    agent = Agent(resolve_model("openai/gpt-4.1-mini"), instructions="Answer briefly.")
    result = await agent.run("hi", model_settings={"extra_body": {"mock_response": "hello from litellm"}})
    assert result.output == "hello from litellm"
    assert result.usage.requests == 1
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


async def test_tool_call_from_litellm_mock_tool_calls_becomes_a_tool_call_part():
    model = resolve_model("anthropic/claude-sonnet-4-5")
    mock_calls = [{"id": "call_7", "type": "function", "function": {"name": "add", "arguments": '{"x": 1, "y": 2}'}}]
    params = ModelRequestParameters(
        function_tools=[
            ToolDefinition(
                name="add",
                parameters_json_schema={
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                },
            )
        ]
    )
    response = await model.request(
        [ModelRequest(parts=[UserPromptPart("add 1 and 2")])], {"extra_body": {"mock_tool_calls": mock_calls}}, params
    )
    calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
    assert [(c.tool_name, c.args_as_dict(), c.tool_call_id) for c in calls] == [("add", {"x": 1, "y": 2}, "call_7")]


async def test_agent_tool_loop_round_trips_tool_results_through_a_litellm_provider(scripted_llm):
    scripted_llm.replies = [_tool_call_reply("add", {"x": 2, "y": 3}), _text_reply("the sum is 5")]
    agent = Agent(resolve_model(scripted_llm.model_string), instructions="Use tools.")

    @agent.tool_plain
    def add(x: int, y: int) -> int:
        return x + y

    result = await agent.run("what is 2+3?")
    assert result.output == "the sum is 5"
    tool_message = scripted_llm.calls[1]["messages"][-1]
    assert (tool_message["role"], tool_message["tool_call_id"], str(tool_message["content"])) == ("tool", "call_1", "5")
    assert result.usage.requests == 2
    assert result.usage.input_tokens == 5 + 11


async def test_api_base_api_key_and_temperature_reach_the_litellm_provider(scripted_llm):
    scripted_llm.replies = [_text_reply("ok")]
    model = resolve_model(scripted_llm.model_string, api_base="http://127.0.0.1:9/v1", api_key="sk-local")
    await Agent(model).run("hi", model_settings={"temperature": 0.25})
    call = scripted_llm.calls[0]
    assert (call["api_base"], call["api_key"]) == ("http://127.0.0.1:9/v1", "sk-local")
    assert call["optional_params"]["temperature"] == 0.25


async def test_litellm_provider_error_surfaces_as_model_http_error_with_its_status(scripted_llm):
    scripted_llm.replies = [
        lambda messages: litellm.BadRequestError(message="context too long", llm_provider="scripted", model="m")
    ]
    with pytest.raises(ModelHTTPError) as excinfo:
        await Agent(resolve_model(scripted_llm.model_string)).run("hi")
    assert excinfo.value.status_code == 400
    assert "context too long" in str(excinfo.value)


def test_pydantic_ai_colon_syntax_names_the_same_litellm_model():
    assert resolve_model("openai:gpt-4.1-mini").model_name == resolve_model("openai/gpt-4.1-mini").model_name


def test_pydantic_ai_colon_syntax_with_an_unknown_provider_is_rejected():
    with pytest.raises(ModelResolutionError, match="unknown litellm provider 'nosuchprovider'"):
        resolve_model("nosuchprovider:some-model")


async def test_cache_prompts_marks_the_system_prompt_and_the_tools_for_explicit_caching(scripted_llm):
    scripted_llm.replies = [_text_reply("ok")]
    model = resolve_model(scripted_llm.model_string, cache_prompts=True, cache_ttl="1h")

    def noop() -> str:
        """A tool."""
        return "x"

    await Agent(model, instructions="You are static.", tools=[noop]).run("per-trace text")

    call = scripted_llm.calls[0]
    system = next(m for m in call["messages"] if m["role"] == "system")
    assert system["content"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert system["content"][-1]["text"] == "You are static."
    user = next(m for m in call["messages"] if m["role"] == "user")
    assert "cache_control" not in str(user)


async def test_without_cache_prompts_no_marker_is_sent(scripted_llm):
    scripted_llm.replies = [_text_reply("ok")]

    await Agent(resolve_model(scripted_llm.model_string), instructions="You are static.").run("hi")

    assert "cache_control" not in str(scripted_llm.calls[0]["messages"])


def test_a_cache_ttl_without_cache_prompts_is_refused():
    with pytest.raises(ModelResolutionError, match="cache_ttl only applies with cache_prompts=True"):
        resolve_model("openai/gpt-4.1-mini", cache_ttl="5m")


def test_importing_ace_models_leaves_the_environment_alone_and_litellm_gets_its_local_price_map() -> None:
    import subprocess
    import sys

    code = (
        "import os; os.environ.pop('LITELLM_LOCAL_MODEL_COST_MAP', None); import ace.models; "
        "before = os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'); "
        "from ace.models.configured_litellm import litellm; "
        "print(before, os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'), litellm.suppress_debug_info)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout

    assert out.split() == ["None", "True", "True"]
