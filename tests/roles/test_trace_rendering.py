"""Any trace is rendered into prompt text: nothing dropped silently, truncation always announced."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from ace.roles._trace_rendering import render_trace


def test_tau2_simulation_renders_every_message_and_tool_call(recorded_simulation: dict[str, Any]) -> None:
    text = render_trace(recorded_simulation)
    for message in recorded_simulation["messages"]:
        if message.get("content"):
            assert message["content"] in text
        for call in message.get("tool_calls") or ():
            assert call["name"] in text
            assert json.dumps(call["arguments"]) in text
    assert recorded_simulation["task_id"] in text
    assert recorded_simulation["termination_reason"] in text


def test_openai_chat_messages_render_function_calls() -> None:
    messages = [
        {"role": "user", "content": "Book flight HAT001"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "book", "arguments": '{"flight": "HAT001"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "booked"},
    ]
    text = render_trace(messages)
    assert "Book flight HAT001" in text
    assert 'book({"flight": "HAT001"})' in text
    assert "booked" in text
    assert '"tool_call_id": "c1"' in text


def test_string_trace_is_kept_verbatim() -> None:
    assert render_trace("agent said hello\nuser left") == "agent said hello\nuser left"


def test_plain_dict_trace_renders_as_json() -> None:
    text = render_trace({"steps": [{"action": "lookup", "result": 42}], "outcome": "wrong"})
    assert json.loads(text) == {"steps": [{"action": "lookup", "result": 42}], "outcome": "wrong"}


def test_oversized_trace_keeps_head_and_tail_and_states_the_cut() -> None:
    trace = "HEAD" + "x" * 10_000 + "TAIL"
    text = render_trace(trace, max_chars=1_000)
    assert text.startswith("HEAD")
    assert text.endswith("TAIL")
    cut = int(re.search(r"TRACE TRUNCATED: (\d+) of 10008 characters cut", text).group(1))
    assert cut == len(trace) - 1_000


def test_non_positive_limit_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_chars must be positive, got 0"):
        render_trace("x", max_chars=0)
