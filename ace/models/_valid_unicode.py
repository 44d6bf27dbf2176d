"""Messages made valid Unicode: lone surrogates in parts' texts and arguments replaced by U+FFFD.

Model output can hold lone surrogates (a provider's JSON may carry a `"\\ud800"` escape, which
Python's json module decodes as it is; code in the sandbox can print one), and so can a trace.
Once such text is in a session's history, every later request fails to encode as UTF-8 and the
session ends with UnicodeEncodeError. `RecoveringModel` cleans each response as it arrives; the
RecursiveAgent cleans the whole history before each request (a history processor).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar, cast

from pydantic_ai.messages import ModelMessage

from ace.untrusted import valid_unicode

__all__ = ["valid_unicode_messages"]

MessageT = TypeVar("MessageT", bound=ModelMessage)

_TEXT_FIELDS = ("content", "args")
"""The part fields that hold text from a model, a tool or the user (str, or lists/dicts of it)."""


def valid_unicode_messages(messages: list[MessageT]) -> list[MessageT]:
    """`messages` with every lone surrogate in the parts' contents and arguments replaced by U+FFFD;
    a message or part is copied only where something was replaced."""
    cleaned: list[MessageT] = []
    for message in messages:
        parts = [_valid_part(part) for part in message.parts]
        changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
        cleaned.append(cast(MessageT, replace(cast(Any, message), parts=parts)) if changed else message)
    return cleaned


def _valid_part(part: Any) -> Any:
    changes = {}
    for name in _TEXT_FIELDS:
        if hasattr(part, name):
            value = getattr(part, name)
            valid = _valid(value)
            if valid is not value:
                changes[name] = valid
    return replace(part, **changes) if changes else part


def _valid(value: Any) -> Any:
    """`value` itself when it holds no lone surrogate, else a copy with them replaced."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return valid_unicode(value)
        return value
    if isinstance(value, list):
        items = [_valid(item) for item in value]
        return items if any(new is not old for new, old in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        pairs = [(_valid(key), _valid(item)) for key, item in value.items()]
        changed = any(
            new_key is not key or new is not old
            for (new_key, new), (key, old) in zip(pairs, value.items(), strict=True)
        )
        return dict(pairs) if changed else value
    return value
