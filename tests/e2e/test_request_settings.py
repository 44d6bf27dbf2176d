"""Every request of every role carries the configured output cap, temperature and extra body fields, on the wire: a whole
`ace-eval e2e` run with real model strings against a stub OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ace_eval.cli import main

_ANALYSIS = {
    "reasoning": "The agent refused.",
    "error_identification": "refused an eligible request",
    "root_cause_analysis": "did not read the policy",
    "correct_approach": "check the policy and act",
    "key_insight": "Check the policy before refusing.",
}


def role_of(body: dict[str, Any]) -> str:
    """Which role sent a request, from its system prompt."""
    system = " ".join(str(m.get("content")) for m in body["messages"] if m["role"] == "system")
    for marker, role in (
        ("<scenario>", "user"),
        ("<policy>", "agent"),
        ("You are the Reflector", "reflector"),
        ("You are the SkillManager", "skill_manager"),
    ):
        if marker in system:
            return role
    return "unknown"


class StubServer:
    """Chat completions that play each role just enough for a run to finish; records every body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                payload = json.dumps(server.reply(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self._httpd.server_port}/v1"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        role = role_of(body)
        tools = {tool["function"]["name"] for tool in body.get("tools") or []}
        message: dict[str, Any] = {"role": "assistant", "content": "Sorry, I cannot help with that."}
        if role == "user":  # first its request, then (having spoken once) the stop token
            spoke = any(m["role"] == "assistant" for m in body["messages"])
            message["content"] = "Thanks. ###STOP###" if spoke else "I would like to cancel my trip."
        elif "final_result" in tools:
            message = _call("final_result", _ANALYSIS)
        elif "finalize" in tools:
            message = _call("finalize", {"reasoning": "nothing new to learn"})
        return {
            "id": "cmpl",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }


@pytest.fixture
def stub_server() -> Iterator[StubServer]:
    server = StubServer()
    try:
        yield server
    finally:
        server.close()


def test_every_request_of_every_role_carries_its_cap_temperature_and_extra_body(
    stub_server: StubServer, tmp_path: Path
) -> None:
    roles = [
        "--agent-model",
        "openai/stub",
        "--user-model",
        "openai/stub",
        "--reflector-model",
        "openai/stub",
        "--skill-manager-model",
        "openai/stub",
    ]

    code = main(
        [
            "e2e",
            "--task-limit",
            "1",
            "--train-epochs",
            "1",
            "--reflector-type",
            "simple",
            "--api-base",
            stub_server.api_base,
            "--api-key",
            "sk-stub",
            "--output-dir",
            str(tmp_path / "run"),
            "--temperature",
            "0.2",
            "--max-output-tokens",
            "300",
            "--skill-manager-max-output-tokens",
            "200",
            "--user-temperature",
            "0.7",
            "--extra-body",
            '{"top_k": 1}',
            "--agent-extra-body",
            '{"cache_prompt": false}',
            *roles,
        ]
    )

    assert code == 0
    expected = {"agent": (300, 0.2), "user": (300, 0.7), "reflector": (300, 0.2), "skill_manager": (200, 0.2)}
    seen: dict[str, set[tuple[Any, Any]]] = {}
    for body in stub_server.bodies:
        cap = body.get("max_tokens", body.get("max_completion_tokens"))
        seen.setdefault(role_of(body), set()).add((cap, body.get("temperature")))
    assert seen == {role: {value} for role, value in expected.items()}
    extra = {role_of(body): (body.get("top_k"), body.get("cache_prompt")) for body in stub_server.bodies}
    assert extra == {"agent": (None, False), "user": (1, None), "reflector": (1, None), "skill_manager": (1, None)}
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    for role, (cap, temperature) in expected.items():
        sent = summary["model_settings"][role]["sent"]
        assert [(entry["max_tokens"], entry["temperature"]) for entry in sent] == [(cap, temperature)]
        assert summary["model_settings"][role]["configured"]["max_output_tokens"] == cap
