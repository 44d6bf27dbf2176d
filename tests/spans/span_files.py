"""Span files written by the real OTel SDK and FileSpanExporter, following the ACE span contract.

Three traces over two epochs: t-a (rr reflection, SM adds s-1 then fails to tag s-9), t-b (simple
reflector, the agent uses s-1, SM updates and tags it; its spans overlap t-a's in time) and t-c
(epoch 1, SM removes s-1 and the session fails). Spans are ended in a shuffled order, so file order
is not time order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Span, Status, StatusCode, set_span_in_context

T0 = 1_767_261_600_000_000_000
"""2026-01-01T10:00:00Z in Unix nanoseconds."""
MS = 1_000_000
REFLECTION = "Check the fare rules first."
"""The reflection text the rr agent span carries (content capture on)."""
NOTHING_FOUND = {"ace.skill_ids": [], "gen_ai.memory.record.count": 0}


@dataclass
class Node:
    """A span to write: name, start/end in ms after T0, attributes, children, failure."""

    name: str
    start: int
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    error: str | None = None


def write_span_file(path: Path, roots: list[Node], *, seed: int = 7) -> None:
    """Write `roots` and their subtrees to `path` through the SDK, ending spans in shuffled order."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    tracer = provider.get_tracer("ace")
    opened: list[tuple[Span, Node]] = []

    def start(node: Node, parent: Span | None) -> None:
        context = set_span_in_context(parent) if parent is not None else None
        span = tracer.start_span(
            node.name, context=context, attributes=node.attributes, start_time=T0 + node.start * MS
        )
        if node.error is not None:
            span.record_exception(RuntimeError(node.error))
            span.set_status(Status(StatusCode.ERROR, node.error))
        opened.append((span, node))
        for child in node.children:
            start(child, span)

    for root in roots:
        start(root, None)
    random.Random(seed).shuffle(opened)
    for span, node in opened:
        span.end(end_time=T0 + node.end * MS)
    provider.shutdown()


def _step(
    name: str,
    start: int,
    end: int,
    trace_uid: str,
    sample: int,
    epoch: int,
    children: list[Node],
    error: str | None = None,
) -> Node:
    attributes = {
        "ace.step": name,
        "ace.sample_id": f"task-{sample}",
        "ace.epoch": epoch,
        "ace.sample_index": sample,
        "ace.trace_uid": trace_uid,
    }
    return Node(f"pipeline.step {name}", start, end, attributes, children, error)


def _chat(start: int, tokens_in: int, tokens_out: int) -> Node:
    return Node(
        "chat test-model",
        start,
        start + 5,
        {"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out},
    )


def _tool(
    name: str, start: int, call_id: str, arguments: str, children: list[Node] | None = None, error: str | None = None
) -> Node:
    attributes = {"gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id, "tool_arguments": arguments}
    return Node(f"execute_tool {name}", start, start + 10, attributes, children or [], error)


def _memory(operation: str, kind: str, start: int, trace_uid: str, skill: str | None = None, **extra: Any) -> Node:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation,
        "ace.skillbook.operation": kind,
        "ace.trace_uid": trace_uid,
        "gen_ai.memory.record.count": 1,
    }
    if skill is not None:
        attributes["gen_ai.memory.record.id"] = skill
    attributes.update(extra)
    return Node(f"{operation} skillbook", start, start + 1, attributes)


def _session(
    name: str, start: int, end: int, trace_uid: str, epoch: int, children: list[Node], error: str | None = None
) -> Node:
    attributes = {"ace.trace_uid": trace_uid, "ace.sample_id": trace_uid, "ace.epoch": epoch}
    return Node(name, start, end, attributes, children, error)


def run_roots() -> list[Node]:
    """The spans of the run described in the module docstring."""
    trace_a = [
        _step(
            "ReflectStep",
            100,
            400,
            "t-a",
            0,
            0,
            [
                _session(
                    "rr.session",
                    110,
                    390,
                    "t-a",
                    0,
                    [
                        Node(
                            "invoke_agent rr",
                            115,
                            385,
                            {"gen_ai.agent.name": "rr", "final_result": REFLECTION},
                            [
                                _chat(120, 1000, 200),
                                _tool(
                                    "execute_code",
                                    130,
                                    "c1",
                                    '{"code": "print(1)"}',
                                    [
                                        _memory("search_memory", "SEARCH", 131, "t-a", **NOTHING_FOUND),
                                    ],
                                ),
                                _chat(150, 1200, 100),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        _step(
            "UpdateStep",
            400,
            900,
            "t-a",
            0,
            0,
            [
                _session(
                    "sm.session",
                    410,
                    890,
                    "t-a",
                    0,
                    [
                        Node(
                            "invoke_agent sm",
                            415,
                            885,
                            {"gen_ai.agent.name": "sm"},
                            [
                                _chat(420, 500, 50),
                                _tool(
                                    "add_skill",
                                    500,
                                    "call-1",
                                    '{"section": "refunds", "content": "Check fare rules"}',
                                    [
                                        _memory("create_memory", "ADD", 501, "t-a", "s-1"),
                                    ],
                                ),
                                _tool(
                                    "tag_skill",
                                    600,
                                    "call-2",
                                    '{"skill_id": "s-9", "tag": "helpful"}',
                                    error="no skill with id 's-9'",
                                ),
                                _chat(700, 600, 40),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ]
    trace_b = [
        _step(
            "AgentStep",
            505,
            548,
            "t-b",
            1,
            0,
            [
                _memory("update_memory", "MARK_USED", 510, "t-b", **{"ace.skill_ids": ["s-1"]}),
                _chat(520, 70, 7),
            ],
        ),
        _step(
            "ReflectStep",
            550,
            640,
            "t-b",
            1,
            0,
            [
                _session("reflector.reflect", 555, 635, "t-b", 0, [_chat(560, 300, 30)]),
            ],
        ),
        _step(
            "UpdateStep",
            640,
            1000,
            "t-b",
            1,
            0,
            [
                _session(
                    "sm.session",
                    645,
                    990,
                    "t-b",
                    0,
                    [
                        _tool(
                            "update_skill",
                            650,
                            "call-3",
                            '{"skill_id": "s-1", "content": "Check fare rules twice"}',
                            [
                                _memory("update_memory", "UPDATE", 651, "t-b", "s-1"),
                            ],
                        ),
                        _tool(
                            "tag_skill",
                            750,
                            "call-4",
                            '{"skill_id": "s-1", "tag": "helpful"}',
                            [
                                _memory("update_memory", "TAG", 751, "t-b", "s-1", **{"ace.tag": "helpful"}),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ]
    trace_c = [
        _step(
            "UpdateStep",
            2000,
            2500,
            "t-c",
            0,
            1,
            [
                _session(
                    "sm.session",
                    2010,
                    2490,
                    "t-c",
                    1,
                    [
                        _tool(
                            "remove_skill",
                            2100,
                            "call-5",
                            '{"skill_id": "s-1"}',
                            [
                                _memory("delete_memory", "REMOVE", 2101, "t-c", "s-1"),
                            ],
                        ),
                    ],
                    error="request limit reached",
                ),
            ],
            error="request limit reached",
        ),
    ]
    return trace_a + trace_b + trace_c
