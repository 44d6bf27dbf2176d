"""Render any trace into prompt text: never dropped, truncated only with an explicit marker.

A trace may be a string, a list of chat messages, a tau2 simulation (a dict with "messages"), any
other mapping or list, a pydantic model or a dataclass. Chat messages are rendered one per block
(role, text, tool calls, tool results); every other value is rendered as indented JSON.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DEFAULT_TRACE_CHAR_LIMIT", "render_trace", "to_plain_data", "truncate_middle"]

DEFAULT_TRACE_CHAR_LIMIT = 60_000
"""Default size of a rendered trace, in characters (roughly 15k tokens)."""

# Fields of a recorded chat message that repeat what the rendered text already shows (provider raw
# payloads, bookkeeping); they are left out of the message block, not out of the trace's meaning.
_MESSAGE_BOOKKEEPING_FIELDS = frozenset(
    {"role", "content", "tool_calls", "raw_data", "usage", "cost", "timestamp", "turn_idx"}
)


def to_plain_data(value: Any) -> Any:
    """Return `value` as JSON-compatible data (dicts, lists, strings, numbers, None).

    Pydantic models are dumped, dataclasses converted, tuples and sets become lists; anything else
    unknown becomes its `str()`.
    """
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "model_dump"):
        return to_plain_data(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_plain_data(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(key): to_plain_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_plain_data(item) for item in value]
    return str(value)


def render_trace(trace: Any, *, max_chars: int = DEFAULT_TRACE_CHAR_LIMIT) -> str:
    """Render `trace` as prompt text of at most about `max_chars` characters.

    A longer rendering keeps its head and tail and says, in the text, how many characters were cut.
    Raises ValueError when `max_chars` is not positive.
    """
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    return truncate_middle(_render(to_plain_data(trace)), max_chars)


def truncate_middle(text: str, max_chars: int) -> str:
    """Return `text` unchanged if it fits in `max_chars`, else its head and tail around a marker
    that states how many characters were cut (the end of a trace usually holds the outcome)."""
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    cut = len(text) - head - tail
    marker = (
        f"\n\n[... TRACE TRUNCATED: {cut} of {len(text)} characters cut here "
        f"(limit {max_chars}) ...]\n\n"
    )
    return text[:head] + marker + text[len(text) - tail :]


def _render(data: Any) -> str:
    if isinstance(data, str):
        return data
    if _is_message_list(data):
        return _render_messages(data)
    if isinstance(data, dict) and _is_message_list(data.get("messages")):
        others = {key: value for key, value in data.items() if key != "messages"}
        header = _json(others) if others else ""
        body = _render_messages(data["messages"])
        return f"{header}\n\nmessages ({len(data['messages'])}):\n{body}" if header else body
    return _json(data)


def _is_message_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) and "role" in item for item in value)
    )


def _render_messages(messages: Sequence[dict[str, Any]]) -> str:
    return "\n\n".join(_render_message(index, message) for index, message in enumerate(messages))


def _render_message(index: int, message: dict[str, Any]) -> str:
    lines = [f"[{index}] {message['role']}:"]
    content = message.get("content")
    if content not in (None, ""):
        lines.append(content if isinstance(content, str) else _json(content))
    for call in message.get("tool_calls") or ():
        lines.append(f"-> tool call {_render_tool_call(call)}")
    extras = {
        key: value
        for key, value in message.items()
        if key not in _MESSAGE_BOOKKEEPING_FIELDS and value not in (None, False, "", [], {})
    }
    if extras:
        lines.append(f"({_json_inline(extras)})")
    return "\n".join(lines)


def _render_tool_call(call: Any) -> str:
    if not isinstance(call, dict):
        return _json_inline(call)
    # tau2 puts name/arguments on the call; OpenAI nests them under "function".
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    name = function.get("name", "?")
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            pass
    call_id = call.get("id")
    suffix = f" [id={call_id}]" if call_id else ""
    return f"{name}({_json_inline(arguments)}){suffix}"


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _json_inline(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)
