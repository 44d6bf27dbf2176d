"""A SkillManager session is one `sm.session` span holding its tool-call and skillbook spans;
a Recursive Reflector session is an `rr.session` span holding its execute_code calls."""

from __future__ import annotations

from typing import Any

from logfire.testing import CaptureLogfire
from pydantic_ai.messages import ToolCallPart

from ace.roles import RecursiveReflector, ReflectorOutput, SkillManager
from ace.skillbook import InsightSource, Skillbook

REFLECTION = ReflectorOutput(
    reasoning="r", error_identification="e", root_cause_analysis="c", correct_approach="a", key_insight="k"
)
ANALYSIS = {
    field: "x"
    for field in ("reasoning", "error_identification", "root_cause_analysis", "correct_approach", "key_insight")
}


def _descends_from(span: dict[str, Any], ancestor: dict[str, Any], by_id: dict[int, dict[str, Any]]) -> bool:
    parent = span.get("parent")
    while parent is not None:
        if parent["span_id"] == ancestor["context"]["span_id"]:
            return True
        parent = by_id[parent["span_id"]].get("parent") if parent["span_id"] in by_id else None
    return False


def _spans(capfire: CaptureLogfire) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
    spans = capfire.exporter.exported_spans_as_dict()
    return spans, {span["context"]["span_id"]: span for span in spans}


async def test_sm_session_span_contains_add_skill_tool_spans(
    capfire: CaptureLogfire, script, skillbook: Skillbook, source: InsightSource
) -> None:
    model = script(
        [
            ToolCallPart(
                "add_skill",
                {"section": "harness", "issue": "tau2 retries block the run", "keywords": ["tau2"], "insight": None},
            )
        ],
        [ToolCallPart("finalize", {"reasoning": "added"})],
    )

    await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    spans, by_id = _spans(capfire)
    (session,) = [span for span in spans if span["name"] == "sm.session"]
    tool_spans = [span for span in spans if span["attributes"].get("gen_ai.tool.name") == "add_skill"]
    mutation_spans = [span for span in spans if span["name"] == "create_memory skillbook"]
    assert len(tool_spans) == 1 and len(mutation_spans) == 1
    assert _descends_from(tool_spans[0], session, by_id)
    assert _descends_from(mutation_spans[0], tool_spans[0], by_id)
    created = mutation_spans[0]["attributes"]
    assert created["gen_ai.memory.record.id"] == skillbook.skills()[0].id
    assert created["ace.trace_uid"] == source.trace_uid


async def test_rr_session_span_contains_execute_code_tool_spans(capfire: CaptureLogfire, script) -> None:
    model = script(
        [ToolCallPart("execute_code", {"code": "print(len(traces))"})],
        [ToolCallPart("finalize", ANALYSIS)],
    )

    await RecursiveReflector(model.model).reflect(trace="abc")

    spans, by_id = _spans(capfire)
    (session,) = [span for span in spans if span["name"] == "rr.session"]
    (tool_span,) = [span for span in spans if span["attributes"].get("gen_ai.tool.name") == "execute_code"]
    assert _descends_from(tool_span, session, by_id)
