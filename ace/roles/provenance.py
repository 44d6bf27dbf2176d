"""Where in a trace a learning came from: the TraceRefs UpdateStep attaches to each source.

The relation of a source to a skill (primary / supporting) is the skill's own rule:
`Skill.primary_trace_uid` and `Skill.relation_of` (docs/loop.md, "Provenance and trace identity").

- **Trace refs.** `trace_refs_for` anchors a learning in the trace it came from: every text the
  reflection quotes (between double quotes, curly quotes or backticks, at least
  `_MIN_QUOTE_CHARS` long) that occurs in the trace, compared case- and whitespace-insensitively,
  becomes a ref to where it occurs; every `[k]` the reflection cites (the index the rendered trace
  shows, or `messages[k]` in RR code) that names a message or step becomes a ref to it with an
  excerpt of it. Where: a conversation (found as `render_trace` finds it) is referenced by message
  (`message_indices` + `json_path`), any other list by item (`step_indices`), a mapping by
  top-level key (`json_path`), a string as a whole (the excerpt only). When nothing the reflection
  says can be found in the trace, the one ref is an excerpt of the reflection's own evidence
  (`excerpt_location="reflection.error_identification"`, else `"reflection.key_insight"`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ace.roles.outputs import ReflectorOutput
from ace.skillbook import TraceRef
from ace.traces.rendering import to_plain_data

__all__ = ["MAX_TRACE_REFS", "TRACE_EXCERPT_CHARS", "trace_refs_for"]

MAX_TRACE_REFS = 5
"""At most this many refs per learning (the first found, in the order the reflection cites them)."""
TRACE_EXCERPT_CHARS = 200
"""An excerpt is cut to this many characters (with a trailing "...")."""

_MIN_QUOTE_CHARS = 8
_QUOTE = re.compile(
    rf'"([^"\n]{{{_MIN_QUOTE_CHARS},400}})"|“([^”\n]{{{_MIN_QUOTE_CHARS},400}})”|`([^`\n]{{{_MIN_QUOTE_CHARS},400}})`'
)
_CITED_INDEX = re.compile(r"\[(\d{1,6})\]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFLECTION_TEXT = ("reasoning", "error_identification", "root_cause_analysis", "correct_approach", "key_insight")


@dataclass(frozen=True)
class _Unit:
    """One addressable part of a trace: a message, a list item, a top-level field or the whole text."""

    kind: Literal["message", "step", "field", "text"]
    index: int | None
    json_path: str | None
    text: str


def trace_refs_for(trace: Any, reflections: Sequence[ReflectorOutput]) -> tuple[TraceRef, ...]:
    """Anchors in `trace` for what the usable `reflections` say (see the module docstring); () when
    every reflection failed."""
    usable = [reflection for reflection in reflections if not reflection.failed]
    if not usable:
        return ()
    units = _units(to_plain_data(trace))
    indexed = {unit.index: unit for unit in units if unit.kind in ("message", "step")}
    normalised = [_normalise(unit.text) for unit in units]
    refs: list[TraceRef] = []
    for reflection in usable:
        text = "\n".join(getattr(reflection, name) for name in _REFLECTION_TEXT)
        for match in _QUOTE.finditer(text):
            quote = next(group for group in match.groups() if group is not None)
            needle = _normalise(quote)
            if len(needle) < _MIN_QUOTE_CHARS:
                continue
            hits = [unit for unit, haystack in zip(units, normalised) if needle in haystack]
            if hits:
                refs.append(_ref(quote, hits))
        for match in _CITED_INDEX.finditer(text):
            unit = indexed.get(int(match.group(1)))
            if unit is not None:
                refs.append(_ref(unit.text, [unit]))
    unique = list(dict.fromkeys(refs))[:MAX_TRACE_REFS]
    return tuple(unique) or _reflection_excerpt(usable[0])


def _ref(excerpt: str, hits: Sequence[_Unit]) -> TraceRef:
    messages = tuple(unit.index for unit in hits if unit.kind == "message" and unit.index is not None)
    steps = tuple(unit.index for unit in hits if unit.kind == "step" and unit.index is not None)
    paths = {unit.json_path for unit in hits}
    return TraceRef(
        text_excerpt=_cut(excerpt),
        excerpt_location="trace",
        json_path=paths.pop() if len(paths) == 1 else None,
        message_indices=messages,
        step_indices=steps,
    )


def _reflection_excerpt(reflection: ReflectorOutput) -> tuple[TraceRef, ...]:
    for name in ("error_identification", "key_insight"):
        text = getattr(reflection, name).strip()
        if text:
            return (TraceRef(text_excerpt=_cut(text), excerpt_location=f"reflection.{name}"),)
    return ()


def _units(data: Any) -> list[_Unit]:
    """The trace split where its structure allows (the conversation rule of `render_trace`)."""
    if isinstance(data, str):
        return [_Unit("text", None, None, data)]
    found = _conversation(data)
    if found is not None:
        path, messages = found
        return [_Unit("message", k, f"{path}[{k}]", _message_text(m)) for k, m in enumerate(messages)]
    if isinstance(data, list):
        return [_Unit("step", k, f"$[{k}]", _text(item)) for k, item in enumerate(data)]
    if isinstance(data, dict):
        return [_Unit("field", None, _key_path("$", key), _text(value)) for key, value in data.items()]
    return [_Unit("text", None, None, _text(data))]


def _conversation(data: Any) -> tuple[str, list[dict[str, Any]]] | None:
    if _is_messages(data):
        return "$", data
    if not isinstance(data, dict):
        return None
    if _is_messages(data.get("messages")):
        return "$.messages", data["messages"]
    for key, holder in data.items():
        if isinstance(holder, dict) and _is_messages(holder.get("messages")):
            return f"{_key_path('$', key)}.messages", holder["messages"]
    return None


def _is_messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    parts = [content if isinstance(content, str) else _text(content)] if content is not None else []
    if message.get("tool_calls"):
        parts.append(_text(message["tool_calls"]))
    return "\n".join(parts)


def _key_path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if _IDENTIFIER.fullmatch(key) else f"{prefix}[{json.dumps(key)}]"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TRACE_EXCERPT_CHARS else text[: TRACE_EXCERPT_CHARS - 3] + "..."
