"""`openai/<name>` + api_base reaches an OpenAI-compatible server over loopback HTTP (as a llama-server would)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic_ai import Agent

from ace.models import resolve_model


class FakeChatServer:
    """A loopback chat-completions endpoint: answers with a tool call, then with text; records bodies."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append({"path": self.path, **body})
                payload = json.dumps(server.reply(len(server.bodies))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self._httpd.server_port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @staticmethod
    def reply(call_number: int) -> dict:
        message: dict = {"role": "assistant", "content": "It is 18C in Paris."}
        finish = "stop"
        if call_number == 1:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
                    }
                ],
            }
            finish = "tool_calls"
        return {
            "id": f"cmpl-{call_number}",
            "object": "chat.completion",
            "created": 0,
            "model": "qwen15",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def chat_server() -> Iterator[FakeChatServer]:
    server = FakeChatServer()
    try:
        yield server
    finally:
        server.close()


async def test_tool_loop_runs_against_a_local_openai_compatible_server(chat_server: FakeChatServer):
    model = resolve_model("openai/qwen15", api_base=chat_server.api_base, api_key="sk-local")
    agent = Agent(model, instructions="Use get_weather.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"18C in {city}"

    result = await agent.run("Weather in Paris?", model_settings={"temperature": 0.0})
    assert result.output == "It is 18C in Paris."
    assert result.usage.requests == 2 and result.usage.input_tokens == 40
    first, second = chat_server.bodies
    assert first["path"] == "/v1/chat/completions"
    assert (first["model"], first["temperature"]) == ("qwen15", 0.0)
    assert [tool["function"]["name"] for tool in first["tools"]] == ["get_weather"]
    tool_message = second["messages"][-1]
    assert (tool_message["role"], tool_message["tool_call_id"], tool_message["content"]) == (
        "tool",
        "call_a",
        "18C in Paris",
    )


class JsonAnswerServer(FakeChatServer):
    """Answers every request with `content` as the assistant's text (a JSON-schema response)."""

    content = ""

    def reply(self, call_number: int) -> dict:  # type: ignore[override]
        reply = FakeChatServer.reply(2)
        reply["choices"][0]["message"] = {"role": "assistant", "content": self.content}
        return reply


@pytest.fixture
def json_server() -> Iterator[JsonAnswerServer]:
    server = JsonAnswerServer()
    try:
        yield server
    finally:
        server.close()


async def test_native_structured_output_asks_the_server_for_the_schema_with_its_length_caps(
    json_server: JsonAnswerServer,
) -> None:
    from ace.roles import Reflector

    analysis = {
        "reasoning": "The answer used dashes.",
        "error_identification": "2022-06-09 instead of 2022.06.09",
        "root_cause_analysis": "the house format was unknown",
        "correct_approach": "write 2022.06.09",
        "key_insight": "Delivery-note dates are YYYY.MM.DD: June 9, 2022 -> 2022.06.09.",
    }
    json_server.content = json.dumps(analysis)
    model = resolve_model("openai/qwen15", api_base=json_server.api_base, api_key="sk-local")
    reflector = Reflector(model, settings=Reflector.DEFAULT_SETTINGS.overridden(structured_output="native"))

    reflection = await reflector.reflect(
        trace={"answer": "2022-06-09"}, question="Ship date?", ground_truth="2022.06.09"
    )

    assert reflection.key_insight == analysis["key_insight"] and not reflection.failed
    (body,) = json_server.bodies
    assert "tools" not in body and "tool_choice" not in body
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert set(schema["required"]) == set(analysis)
    assert all(0 < field["maxLength"] <= 1200 for field in schema["properties"].values())


async def test_tool_structured_output_is_the_default_and_sends_no_response_format(
    json_server: JsonAnswerServer,
) -> None:
    from pydantic_ai.exceptions import UnexpectedModelBehavior

    from ace.roles import Reflector

    json_server.content = "not a tool call"
    model = resolve_model("openai/qwen15", api_base=json_server.api_base, api_key="sk-local")

    with pytest.raises(UnexpectedModelBehavior):  # prose where the output tool is required, every time
        await Reflector(model).reflect(trace={"answer": "x"}, question="q")

    first = json_server.bodies[0]
    assert "response_format" not in first
    assert [tool["function"]["name"] for tool in first["tools"]] == ["final_result"]


async def test_extra_body_fields_reach_the_server_beside_the_role_settings(json_server: JsonAnswerServer) -> None:
    from pydantic_ai.exceptions import UnexpectedModelBehavior

    from ace.roles import Reflector

    json_server.content = "not a tool call"
    model = resolve_model("openai/qwen15", api_base=json_server.api_base, api_key="sk-local")
    settings = Reflector.DEFAULT_SETTINGS.overridden(extra_body={"cache_prompt": False, "top_k": 1})

    with pytest.raises(UnexpectedModelBehavior):  # prose where the output tool is required; the bodies matter
        await Reflector(model, settings=settings).reflect(trace={"answer": "x"}, question="q")

    first = json_server.bodies[0]
    assert (first["cache_prompt"], first["top_k"], first["max_completion_tokens"]) == (False, 1, 1024)


def test_extra_body_is_a_json_object_that_leaves_the_roles_fields_alone() -> None:
    from ace.errors import UsageError
    from ace.models import RequestSettings

    body = {"cache_prompt": False}
    settings = RequestSettings(extra_body=body)
    body["cache_prompt"] = True  # the settings hold their own copy
    assert settings.model_settings() == {"extra_body": {"cache_prompt": False}}
    assert RequestSettings(temperature=0.0).overridden(extra_body={"a": 1}).overridden(seed=2).extra_body == {"a": 1}
    with pytest.raises(UsageError, match="may not set max_tokens, temperature"):
        RequestSettings(extra_body={"temperature": 1.0, "max_tokens": 5})
    with pytest.raises(UsageError, match="JSON object"):
        RequestSettings(extra_body=["cache_prompt"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="JSON-serialisable"):
        RequestSettings(extra_body={"x": float("nan")})
