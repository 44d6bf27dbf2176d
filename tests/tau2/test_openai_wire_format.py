"""Through a real OpenAI chat model (HTTP mocked), the agent's and the user's requests are well formed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
from openai import AsyncOpenAI
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ace_eval.tau2 import LLMAgent, UserSimulator, load_tasks, run_simulation


def _completion(message: dict) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-mock",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", **message}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def _mock_openai(replies: Iterator[dict], requests: list[dict]) -> OpenAIChatModel:
    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        return httpx.Response(200, json=_completion(next(replies)))

    http_client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    client = AsyncOpenAI(base_url="http://mock.invalid/v1", api_key="unused", http_client=http_client)
    return OpenAIChatModel("gpt-mock", provider=OpenAIProvider(openai_client=client))


async def test_agent_and_user_requests_follow_the_openai_chat_format() -> None:
    task = load_tasks("test")[0]
    agent_requests: list[dict] = []
    user_requests: list[dict] = []
    arguments = '{"user_id": "noah_muller_9847"}'
    lookup = {"id": "call_1", "type": "function", "function": {"name": "get_user_details", "arguments": arguments}}
    agent_replies = iter([{"content": None, "tool_calls": [lookup]}, {"content": "Found you, Noah."}])
    agent = _mock_openai(agent_replies, agent_requests)
    user = _mock_openai(iter([{"content": "Hi, I am Noah."}, {"content": "Great. ###STOP###"}]), user_requests)

    run = await run_simulation(task, agent=LLMAgent(agent), user=UserSimulator(user, task.user_scenario))

    assert run.termination_reason == "user_stop"
    assert run.messages[3].content.startswith('{"user_id": "noah_muller_9847"')
    second = agent_requests[1]
    assert [m["role"] for m in second["messages"]] == ["system", "assistant", "user", "assistant", "tool"]
    assert second["messages"][3]["tool_calls"][0]["id"] == second["messages"][4]["tool_call_id"] == "call_1"
    assert len(second["tools"]) == 14
    last_user = user_requests[-1]
    assert [m["role"] for m in last_user["messages"]] == ["system", "user", "assistant", "user"]
    assert last_user["messages"][-1]["content"] == "Found you, Noah."
    assert "tools" not in last_user
