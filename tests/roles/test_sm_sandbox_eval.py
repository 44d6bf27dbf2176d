"""The SkillManager's opt-in sandbox_eval(code) tool (seed 002), driven through the real tool loop."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from ace.agentic.sandbox import Sandbox
from ace.roles import ReflectorOutput, SkillManager
from ace.skillbook import InsightSource, Skillbook

REFLECTION = ReflectorOutput(
    reasoning="the agent cancelled a basic economy booking",
    error_identification="cancelled without checking insurance",
    root_cause_analysis="policy not consulted",
    correct_approach="check insurance first",
    key_insight="verify cancellation eligibility before cancelling",
)
FINALIZE = [ToolCallPart("finalize", {"reasoning": "nothing to change"})]


def _sandbox_returns(messages: list[Any]) -> list[str]:
    return [
        str(part.content)
        for part in messages[-1].parts
        if isinstance(part, ToolReturnPart) and part.tool_name == "sandbox_eval"
    ]


class _Factory:
    """A sandbox factory with short limits that remembers the sandboxes it made."""

    def __init__(self, **limits: Any) -> None:
        self.limits = {"timeout_s": 2.0, "memory_mb": 256, **limits}
        self.made: list[Sandbox] = []

    def __call__(self) -> Sandbox:
        sandbox = Sandbox(**self.limits)
        self.made.append(sandbox)
        return sandbox


def _run_code(code: str, seen: list[str]) -> FunctionModel:
    def respond(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("sandbox_eval", {"code": code})])
        seen.extend(_sandbox_returns(messages))
        return ModelResponse(parts=FINALIZE)

    return FunctionModel(respond)


async def _session(manager: SkillManager, skillbook: Skillbook, source: InsightSource, **kwargs: Any) -> Any:
    return await manager.update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source, **kwargs)


async def test_sandbox_eval_is_offered_only_when_enabled(skillbook: Skillbook, source: InsightSource, embedder) -> None:
    offered: list[set[str]] = []

    def record(messages: list[Any], info: Any) -> ModelResponse:
        offered.append({tool.name for tool in info.function_tools})
        return ModelResponse(parts=FINALIZE)

    factory = _Factory()
    await _session(SkillManager(FunctionModel(record), embedder=embedder), skillbook, source)
    await _session(SkillManager(FunctionModel(record), embedder=embedder, sandbox_eval=factory), skillbook, source)

    assert "sandbox_eval" not in offered[0]
    assert offered[1] == offered[0] | {"sandbox_eval"}
    assert factory.made == []  # a session that runs no code starts no sandbox


async def test_sandbox_eval_sees_the_reflections_and_skills_as_json_and_its_output_reaches_the_model(
    skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    skill = skillbook.add_skill("context", "Basic economy cancellations", ["airline"], "Check insurance first")
    code = (
        "print(reflections[0]['key_insight'])\n"
        "print([s['id'] for s in skills], [s['helpful_count'] for s in skills])\n"
        "print(injected_skill_ids, trace_uid)"
    )
    seen: list[str] = []
    factory = _Factory()

    output = await _session(
        SkillManager(_run_code(code, seen), embedder=embedder, sandbox_eval=factory),
        skillbook,
        source,
        injected_skill_ids=[skill.id],
    )

    (result,) = seen
    assert "verify cancellation eligibility before cancelling" in result
    assert f"['{skill.id}'] [0]" in result
    assert f"['{skill.id}'] {source.trace_uid}" in result
    assert output.finished and output.operations == ()
    (sandbox,) = factory.made
    assert sandbox.process_id is None  # closed when the session ended


async def test_sandbox_eval_output_is_cut_like_the_recursive_reflectors(
    skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    seen: list[str] = []
    manager = SkillManager(
        _run_code("print('x' * 5000)", seen), embedder=embedder, sandbox_eval=_Factory(max_output_chars=200)
    )

    await _session(manager, skillbook, source)

    (result,) = seen
    assert "(output truncated: print less at a time)" in result
    assert result.count("x") < 400


async def test_sandbox_eval_timeout_is_reported_to_the_model(
    skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    seen: list[str] = []
    manager = SkillManager(_run_code("while True: pass", seen), embedder=embedder, sandbox_eval=_Factory(timeout_s=0.5))

    await _session(manager, skillbook, source)

    (result,) = seen
    assert "exceeded the time limit" in result
    assert "Defined: `reflections`, `skills`" in result


async def test_sandbox_eval_cannot_change_the_skillbook(skillbook: Skillbook, source: InsightSource, embedder) -> None:
    skill = skillbook.add_skill("context", "Basic economy cancellations", ["airline"], "Check insurance first")
    before = skillbook.get_skill(skill.id).to_dict()
    seen: list[str] = []
    code = "skills[0]['issue'] = 'changed'; skills.clear(); print(len(skills))"

    await _session(SkillManager(_run_code(code, seen), embedder=embedder, sandbox_eval=_Factory()), skillbook, source)

    assert seen == ["stdout:\n0\n"] or seen[0].startswith("stdout:\n0")
    assert skillbook.get_skill(skill.id).to_dict() == before


def test_sandbox_eval_rejects_a_value_that_is_neither_a_flag_nor_a_factory() -> None:
    with pytest.raises(ValueError, match="sandbox_eval must be True, False or a sandbox factory"):
        SkillManager("test", sandbox_eval="yes")  # type: ignore[arg-type]


async def test_sandbox_eval_true_uses_the_default_sandbox(
    skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    seen: list[str] = []

    await _session(
        SkillManager(_run_code("print(6 * 7)", seen), embedder=embedder, sandbox_eval=True), skillbook, source
    )

    assert seen == ["stdout:\n42\n"] or "42" in seen[0]


async def test_two_sandbox_eval_calls_in_one_response_share_one_sandbox(
    skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    seen: list[str] = []

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart("sandbox_eval", {"code": "x = 1"}),
                    ToolCallPart("sandbox_eval", {"code": "print(len(reflections))"}),
                ]
            )
        seen.extend(_sandbox_returns(messages))
        return ModelResponse(parts=FINALIZE)

    factory = _Factory()
    await _session(SkillManager(FunctionModel(respond), embedder=embedder, sandbox_eval=factory), skillbook, source)

    assert len(factory.made) == 1 and len(seen) == 2
    assert any("1" in result for result in seen)


async def test_a_sandbox_that_cannot_start_fails_the_session_loudly(
    skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    def broken() -> Sandbox:
        raise RuntimeError("no sandbox here")

    with pytest.raises(RuntimeError, match="no sandbox here"):
        await _session(
            SkillManager(_run_code("print(1)", []), embedder=embedder, sandbox_eval=broken), skillbook, source
        )
