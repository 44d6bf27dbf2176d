"""Bounds of a structured field that only a grammar enforces.

With native structured output (`RequestSettings(structured_output="native")`) or a server that
constrains tool calls by their schema (llama-server), the JSON schema's `maxLength` / `maxItems`
become part of the grammar: they end a small model's runaway inside one field (seen with a 1.5B
model: an answer repeating digits, a reflection looping, a tool call past the output cap) instead
of the output-token cap cutting the whole answer. They are never validated, so a longer value from
a model that is not constrained is kept as it is.
"""

from __future__ import annotations

from pydantic import JsonValue

__all__ = ["schema_bounds"]


def schema_bounds(*, max_length: int | None = None, max_items: int | None = None) -> dict[str, JsonValue]:
    """The `json_schema_extra` of a pydantic `Field` carrying these bounds (None: unbounded)."""
    bounds: dict[str, JsonValue] = {}
    if max_length is not None:
        bounds["maxLength"] = max_length
    if max_items is not None:
        bounds["maxItems"] = max_items
    return bounds
