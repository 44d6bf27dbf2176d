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
