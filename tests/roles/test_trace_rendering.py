"""Any trace is rendered into prompt text: nothing dropped silently, truncation always announced."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ace.steps import load_trace_file
from ace.traces.rendering import DEFAULT_TRACE_CHAR_LIMIT, render_trace

LANGCHAIN_RUN = "langchain_gpt-oss-120b_airline_50_1trial.json"
"""A recorded tau2 Results file; its task 15 is the longest simulation (one tool call repeated ~90 times)."""


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}


def _covered_indices(text: str) -> list[int]:
    """Every message index the rendering shows, as a block `[i] role:` or inside a marker `[a-b] (...`."""
    indices: list[int] = []
    for first, last in re.findall(r"^\[(\d+)(?:-(\d+))?\] ", text, flags=re.MULTILINE):
        indices.extend(range(int(first), int(last or first) + 1))
    return indices


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
    assert "[0] user:\nBook flight HAT001" in text
    assert '[1] assistant:\n-> book({"flight": "HAT001"})' in text
    assert "[2] tool book:\nbooked" in text
    assert "c1" not in text
    assert "function" not in text


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


def test_tau2_trace_nested_under_simulation_renders_as_conversation_without_bookkeeping(recorded_dir: Path) -> None:
    trace = load_trace_file(recorded_dir / LANGCHAIN_RUN)[0]
    simulation = trace["simulation"]
    text = render_trace(trace)
    context, conversation = text.split(f"\n\nmessages ({len(simulation['messages'])}):\n")
    assert conversation.startswith("[0] assistant:")
    assert f"task: {json.dumps(trace['task'], ensure_ascii=False)}" in context.splitlines()
    assert f"simulation.termination_reason: {simulation['termination_reason']}" in context.splitlines()
    assert (
        f"simulation.reward_info: {json.dumps(simulation['reward_info'], ensure_ascii=False)}" in context.splitlines()
    )
    for key in ("timestamp", "start_time", "end_time", "duration", "agent_cost", "user_cost", "seed"):
        assert f"simulation.{key}:" not in context
    for field in ("raw_data", "usage", "cost", "timestamp", "turn_idx", "requestor", "error"):
        assert f'"{field}"' not in conversation
    for message in simulation["messages"]:
        for call in message.get("tool_calls") or ():
            assert f"-> {call['name']}({json.dumps(call['arguments'], ensure_ascii=False)})" in conversation
            assert call["id"] not in text


def test_online_loop_trace_renders_its_keys_one_per_line_before_the_conversation() -> None:
    trace = {
        "question": "Cancel EHGLP3",
        "feedback": "reward 0.0",
        "metrics": {"reward": 0.0},
        "injected_skill_ids": [],
        "task": {"id": "7"},
        "simulation": {
            "task_id": "7",
            "seed": 300,
            "agent_cost": 0.01,
            "termination_reason": "user_stop",
            "messages": [{"role": "user", "content": "Cancel EHGLP3"}],
        },
    }
    assert render_trace(trace) == (
        "question: Cancel EHGLP3\n"
        "feedback: reward 0.0\n"
        'metrics: {"reward": 0.0}\n'
        'task: {"id": "7"}\n'
        "simulation.task_id: 7\n"
        "simulation.termination_reason: user_stop\n"
        "\n"
        "messages (1):\n"
        "[0] user:\n"
        "Cancel EHGLP3"
    )


def test_tool_results_are_labelled_with_the_tool_they_answer_and_flag_errors() -> None:
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                _call("a", "get_user_details", user_id="u1"),
                _call("b", "book_reservation", flight="HAT001"),
            ],
        },
        {"role": "tool", "id": "a", "content": '{"name": "Ann"}', "error": False, "requestor": "assistant"},
        {
            "role": "tool",
            "id": "b",
            "content": "Error: payment does not add up",
            "error": True,
            "requestor": "assistant",
        },
    ]
    text = render_trace(messages)
    assert '[1] tool get_user_details:\n{"name": "Ann"}' in text
    assert "[2] tool book_reservation (error):\nError: payment does not add up" in text
    assert "requestor" not in text and 'error"' not in text


def test_unknown_message_fields_are_still_shown() -> None:
    messages = [
        {"role": "user", "content": "hi", "errors": ["Invalid message format"], "attempt": 0, "reasoning": None},
        {"role": "assistant", "content": None, "tool_calls": [{**_call("a", "lookup"), "requestor": "user"}]},
    ]
    text = render_trace(messages)
    assert '[0] user:\nhi\n({"errors": ["Invalid message format"], "attempt": 0})' in text
    assert '-> lookup({}) {"requestor": "user"}' in text


def test_repeated_exchange_is_collapsed_into_a_marker_stating_its_indices_and_count() -> None:
    messages = [
        {"role": "user", "content": "yes"},
        *[
            message
            for n in range(5)
            for message in [
                {"role": "assistant", "content": None, "tool_calls": [_call(f"c{n}", "update", flight="HAT001")]},
                {"role": "tool", "id": f"c{n}", "content": "updated"},
            ]
        ],
        {"role": "user", "content": "bye"},
    ]
    text = render_trace(messages)
    assert text.endswith(
        '[1] assistant:\n-> update({"flight": "HAT001"})\n\n'
        "[2] tool update:\nupdated\n\n"
        "[3-10] (the 2 messages above, [1]-[2], repeated 4 more times identically)\n\n"
        "[11] user:\nbye"
    )
    assert sorted(_covered_indices(text)) == list(range(len(messages)))


def test_repetition_collapse_takes_the_block_size_hiding_most_messages() -> None:
    messages = [{"role": "user", "content": "again"}] * 4
    text = render_trace(messages)
    assert text.endswith("[0] user:\nagain\n\n[1-3] (the message above, [0], repeated 3 more times identically)")


def test_differing_messages_are_not_collapsed() -> None:
    messages = [
        message
        for n in range(4)
        for message in [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call(f"c{n}", "get_flight_status", flight=f"HAT00{n}")],
            },
            {"role": "tool", "id": f"c{n}", "content": "available"},
        ]
    ]
    text = render_trace(messages)
    assert "repeated" not in text
    assert _covered_indices(text) == list(range(len(messages)))


def test_longest_recorded_simulation_keeps_every_message_and_fits_untruncated(recorded_dir: Path) -> None:
    traces = load_trace_file(recorded_dir / LANGCHAIN_RUN)
    (trace,) = [trace for trace in traces if trace["task"]["id"] == "15"]
    messages = trace["simulation"]["messages"]
    text = render_trace(trace)
    assert len(render_trace(trace, max_chars=10**9)) <= DEFAULT_TRACE_CHAR_LIMIT
    assert "TRACE TRUNCATED" not in text
    assert sorted(_covered_indices(text)) == list(range(len(messages)))
    for message in messages:
        if message.get("content"):
            assert message["content"] in text
        for call in message.get("tool_calls") or ():
            assert f"-> {call['name']}({json.dumps(call['arguments'], ensure_ascii=False)})" in text


def test_a_structurally_odd_loaded_trace_renders_without_raising() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    trace = {
        "simulation": {
            "messages": [
                {"role": "assistant", "content": 5, "tool_calls": 7},
                {"role": 3, "tool_calls": [1, {"name": {"x": 1}, "arguments": deep}, {"function": "f"}]},
                {"role": "tool", "id": [1], "name": {"a": 1}, "error": "yes", "content": None},
                {"role": "assistant", "tool_calls": [{"id": "c", "name": "n", "arguments": "9" * 5000}]},
            ]
        }
    }

    text = render_trace(trace)

    assert "tool_calls" in text and "7" in text  # a tool_calls that is not a list is shown as a field
    assert deep[:50] in text  # arguments that cannot be parsed are shown as their text (cut short)
