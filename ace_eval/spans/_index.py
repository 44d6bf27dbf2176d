"""`SpanIndex`: the spans of a file by key, with their children, ancestors and the ACE span kinds."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ace_eval.spans._reader import Span

__all__ = [
    "MEMORY_OPERATIONS",
    "OTHER_ROLE",
    "SESSION_ROLES",
    "SpanIndex",
    "is_chat",
    "is_memory",
    "is_step",
    "is_tool_call",
    "skill_ids",
]

SESSION_ROLES: dict[str, str] = {"sm.session": "sm", "rr.session": "rr", "reflector.reflect": "reflector"}
"""Session span names and the learning role each runs."""

MEMORY_OPERATIONS = frozenset({"create_memory", "update_memory", "delete_memory", "search_memory"})
"""`gen_ai.operation.name` values of skillbook memory spans."""

OTHER_ROLE = "agent/other"
"""The token role of a `chat` span outside every learning session (the task agent, the user simulator...)."""


def is_memory(span: Span) -> bool:
    """A skillbook memory span (`<operation> skillbook` with a GenAI memory operation)."""
    return span.attributes.get("gen_ai.operation.name") in MEMORY_OPERATIONS and span.name.endswith(" skillbook")


def skill_ids(span: Span) -> list[str]:
    """The span's `ace.skill_ids`: an OTLP array, or the JSON text of one (logfire sends lists as JSON)."""
    value = span.attributes.get("ace.skill_ids")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [value]
        if not isinstance(value, list):
            return [str(value)]
    return [str(item) for item in value or ()]


def is_tool_call(span: Span) -> bool:
    return span.name.startswith("execute_tool ")


def is_step(span: Span) -> bool:
    return span.name.startswith("pipeline.step ")


def is_chat(span: Span) -> bool:
    return span.name.startswith("chat ")


class SpanIndex:
    """Spans by (traceId, spanId), their children in start order, and lookups up the parent chain."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans: list[Span] = sorted(spans, key=lambda span: span.start)
        """Every span, in start order (sessions run concurrently, so file order is not time order)."""
        self.by_key: dict[tuple[str, str], Span] = {span.key: span for span in self.spans}
        self.children: dict[tuple[str, str], list[Span]] = defaultdict(list)
        for span in self.spans:
            if span.parent is not None:
                self.children[span.parent].append(span)

    def ancestors(self, span: Span) -> Iterator[Span]:
        """The parent, its parent, ... as far as the file holds them."""
        seen = {span.key}
        key = span.parent
        while key is not None and key in self.by_key and key not in seen:
            seen.add(key)
            parent = self.by_key[key]
            yield parent
            key = parent.parent

    def descendants(self, span: Span) -> list[Span]:
        """Every span below `span`, in start order."""
        found: list[Span] = []
        stack = list(self.children.get(span.key, ()))
        while stack:
            child = stack.pop()
            found.append(child)
            stack.extend(self.children.get(child.key, ()))
        return sorted(found, key=lambda child: child.start)

    def enclosing_session(self, span: Span) -> Span | None:
        """The nearest ancestor that is a learning session or a pipeline step."""
        return next((a for a in self.ancestors(span) if a.name in SESSION_ROLES or is_step(a)), None)

    def enclosing_tool_call(self, span: Span) -> Span | None:
        return next((a for a in self.ancestors(span) if is_tool_call(a)), None)

    def inherited(self, span: Span, key: str) -> Any:
        """Attribute `key` of `span`, else of its nearest ancestor that has it (e.g. `ace.trace_uid`)."""
        if key in span.attributes:
            return span.attributes[key]
        return next((a.attributes[key] for a in self.ancestors(span) if key in a.attributes), None)

    def role_of(self, span: Span) -> str:
        """The learning role of the nearest enclosing session, or `OTHER_ROLE`."""
        return next((SESSION_ROLES[a.name] for a in self.ancestors(span) if a.name in SESSION_ROLES), OTHER_ROLE)
