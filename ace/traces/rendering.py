"""Render any trace into prompt text: never dropped, truncated only with an explicit marker.

A trace may be a string (kept verbatim), a conversation, or anything else (a mapping, a list, a
pydantic model, a dataclass), which is rendered as indented JSON.

A conversation is a non-empty list of chat messages (dicts with a "role") found
(a) as the trace itself,
(b) at the "messages" key of a mapping, or
(c) one level down: at the "messages" key of a mapping that is a value of the trace mapping, as in
    a tau2 trace `{"task": {...}, "simulation": {..., "messages": [...]}}`.
It is rendered as context lines, then one block per message:

- Context: one line per other key of the trace mapping, `key: value` (a string as is, anything else
  as one-line JSON), empty values omitted. The keys of the mapping holding "messages" are prefixed
  with its key in case (c) (`simulation.reward_info: {...}`), and the run bookkeeping keys
  (`_RUN_BOOKKEEPING_KEYS`: timestamps, duration, costs, seed) are dropped at that level.
- A message: `[i] role:` then its text, then one `-> name({"arg": ...})` line per tool call (tau2
  calls, or OpenAI calls nesting name and string arguments under "function"), without call ids
  (a "tool_calls" that is not a list is shown as any other field; string arguments that are not
  valid JSON within `ace.untrusted`'s limits are shown as the text they are).
  A tool result is labelled with the name of the call it answers, matched by its "id" (tau2) or
  "tool_call_id" (OpenAI), and flagged when it is an error: `[5] tool get_user_details (error):`.
  Bookkeeping fields (`_MESSAGE_BOOKKEEPING_KEYS`, "requestor" when it is "assistant") and empty
  values are left out; any other field is shown on one line as JSON, so nothing real is lost.
- Repetitions are collapsed by one greedy rule, left to right: at message i, for each block size
  p from 1 to `_MAX_REPEATED_BLOCK`, count k, how many times messages i..i+p-1 repeat immediately
  after themselves (blocks compared by their rendering without the `[i]` index). The p hiding most
  messages (p*k) wins, the smaller p on ties. If k >= 1, messages i..i+p-1 are rendered, then one
  marker naming the hidden indices, e.g. `[22-199] (the 2 messages above, [20]-[21], repeated
  89 more times identically)`, and the scan continues after them; otherwise message i is rendered
  and the scan continues at i+1. Every index is thus rendered or inside a stated range.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ace.errors import UsageError
from ace.untrusted import UntrustedInputError, parse_json

__all__ = ["DEFAULT_TRACE_CHAR_LIMIT", "render_trace", "to_plain_data", "truncate_middle"]

DEFAULT_TRACE_CHAR_LIMIT = 60_000
"""Default size of a rendered trace, in characters (roughly 15k tokens)."""

_MESSAGE_BOOKKEEPING_KEYS = frozenset({"raw_data", "usage", "cost", "timestamp", "turn_idx", "id", "tool_call_id"})
"""Message fields that repeat what the block shows (provider payloads) or mean nothing to a reader."""

_RUN_BOOKKEEPING_KEYS = frozenset(
    {"timestamp", "start_time", "end_time", "duration", "agent_cost", "user_cost", "seed"}
)
"""Keys of the mapping holding "messages" that record how the run was executed, not what happened."""

_MAX_REPEATED_BLOCK = 4
"""Largest block of consecutive messages whose immediate repetitions are collapsed."""


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
        raise UsageError(f"max_chars must be positive, got {max_chars}")
    return truncate_middle(_render(to_plain_data(trace)), max_chars)


def truncate_middle(text: str, max_chars: int) -> str:
    """Return `text` unchanged if it fits in `max_chars`, else its head and tail around a marker
    that states how many characters were cut (the end of a trace usually holds the outcome)."""
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    cut = len(text) - head - tail
    marker = f"\n\n[... TRACE TRUNCATED: {cut} of {len(text)} characters cut here (limit {max_chars}) ...]\n\n"
    return text[:head] + marker + text[len(text) - tail :]


def _render(data: Any) -> str:
    if isinstance(data, str):
        return data
    conversation = _find_conversation(data)
    if conversation is None:
        return _json(data)
    context, messages = conversation
    body = f"messages ({len(messages)}):\n" + "\n\n".join(_render_messages(messages))
    return "\n".join(context) + "\n\n" + body if context else body


def _find_conversation(data: Any) -> tuple[list[str], list[dict[str, Any]]] | None:
    """The context lines and the messages of `data`, or None when it holds no conversation."""
    if _is_message_list(data):
        return [], data
    if not isinstance(data, dict):
        return None
    holder_skip = _RUN_BOOKKEEPING_KEYS | {"messages"}
    if _is_message_list(data.get("messages")):
        return _context_lines(data, skip=holder_skip), data["messages"]
    for holder_key, holder in data.items():
        if isinstance(holder, dict) and _is_message_list(holder.get("messages")):
            lines: list[str] = []
            for key, value in data.items():
                if key == holder_key:
                    lines += _context_lines(holder, skip=holder_skip, prefix=f"{holder_key}.")
                else:
                    lines += _context_lines({key: value})
            return lines, holder["messages"]
    return None


def _context_lines(mapping: dict[str, Any], *, skip: frozenset[str] = frozenset(), prefix: str = "") -> list[str]:
    return [
        f"{prefix}{key}: {value if isinstance(value, str) else _json_inline(value)}"
        for key, value in mapping.items()
        if key not in skip and not _is_empty(value)
    ]


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) and "role" in item for item in value)


def _render_messages(messages: Sequence[dict[str, Any]]) -> list[str]:
    """One block per message or per collapsed run of repetitions (see the module docstring)."""
    bodies = _message_bodies(messages)
    blocks: list[str] = []
    i = 0
    while i < len(bodies):
        size, repeats = _longest_repetition(bodies, i)
        if repeats == 0:
            blocks.append(f"[{i}] {bodies[i]}")
            i += 1
            continue
        blocks.extend(f"[{j}] {bodies[j]}" for j in range(i, i + size))
        first_hidden, last_hidden = i + size, i + size * (repeats + 1) - 1
        shown = f"[{i}]" if size == 1 else f"[{i}]-[{i + size - 1}]"
        what = "the message above" if size == 1 else f"the {size} messages above"
        times = "1 more time" if repeats == 1 else f"{repeats} more times"
        hidden = _index_range(first_hidden, last_hidden)
        blocks.append(f"{hidden} ({what}, {shown}, repeated {times} identically)")
        i = last_hidden + 1
    return blocks


def _longest_repetition(bodies: Sequence[str], start: int) -> tuple[int, int]:
    """(block size p, repetitions k) of the block at `start` hiding most messages; k is 0 if none."""
    best_size, best_repeats = 1, 0
    for size in range(1, _MAX_REPEATED_BLOCK + 1):
        block = bodies[start : start + size]
        repeats = 0
        while bodies[start + size * (repeats + 1) : start + size * (repeats + 2)] == block:
            repeats += 1
        if size * repeats > best_size * best_repeats:
            best_size, best_repeats = size, repeats
    return best_size, best_repeats


def _index_range(first: int, last: int) -> str:
    return f"[{first}]" if first == last else f"[{first}-{last}]"


def _message_bodies(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Each message rendered without its `[i] ` index; tool results named after earlier calls."""
    tool_names: dict[str, str] = {}
    bodies = []
    for message in messages:
        bodies.append(_render_message(message, tool_names))
        for call in _tool_calls(message):
            if isinstance(call, dict) and call.get("id") is not None:
                tool_names[str(call["id"])] = _call_name_and_arguments(call)[0]
    return bodies


def _tool_calls(message: dict[str, Any]) -> list[Any]:
    """The message's tool calls; a "tool_calls" that is not a list is shown as an extra field."""
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _render_message(message: dict[str, Any], tool_names: Mapping[str, str]) -> str:
    shown = {"role", "content"}
    if isinstance(message.get("tool_calls"), list):
        shown.add("tool_calls")
    label = str(message["role"])
    if message["role"] == "tool":
        call_id = message.get("id", message.get("tool_call_id"))
        name = tool_names.get(str(call_id), message.get("name"))
        if name:
            label += f" {name}"
            if message.get("name") in (None, name):
                shown.add("name")
        if isinstance(message.get("error"), bool):
            shown.add("error")
            if message["error"]:
                label += " (error)"
    lines = [f"{label}:"]
    content = message.get("content")
    if not _is_empty(content):
        lines.append(content if isinstance(content, str) else _json_inline(content))
    lines += [f"-> {_render_tool_call(call)}" for call in _tool_calls(message)]
    extras = _extra_fields(message, shown | _MESSAGE_BOOKKEEPING_KEYS)
    if extras:
        lines.append(f"({_json_inline(extras)})")
    return "\n".join(lines)


def _render_tool_call(call: Any) -> str:
    if not isinstance(call, dict):
        return _json_inline(call)
    name, arguments = _call_name_and_arguments(call)
    rendered = f"{name}({'' if arguments is None else _json_inline(arguments)})"
    shown = {"id", "name", "arguments", "function"}
    if call.get("type") == "function":
        shown.add("type")
    extras = _extra_fields(call, shown)
    return f"{rendered} {_json_inline(extras)}" if extras else rendered


def _call_name_and_arguments(call: dict[str, Any]) -> tuple[str, Any]:
    # tau2 puts name/arguments on the call; OpenAI nests them under "function", arguments as JSON text.
    function = call["function"] if isinstance(call.get("function"), dict) else call
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = parse_json(arguments, "tool call arguments")
        except UntrustedInputError:
            pass  # shown as the text it is
    return str(function.get("name", "?")), arguments


def _extra_fields(item: dict[str, Any], shown: set[str] | frozenset[str]) -> dict[str, Any]:
    """The fields of a message or tool call not rendered elsewhere and worth showing."""
    return {
        key: value
        for key, value in item.items()
        if key not in shown and not _is_empty(value) and not (key == "requestor" and value == "assistant")
    }


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _json_inline(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)
