"""The SkillManager's real tool loop mutates the skillbook, with provenance and an audit log."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.agentic import AgenticConfig
from ace.roles import ReflectorOutput, SkillManager, SkillManagerIncompleteError
from ace.roles.skill_manager import unbacked_claims
from ace.skillbook import InsightSource, Skillbook, UpdateOperation

REFLECTION = ReflectorOutput(
    reasoning="the agent cancelled a basic economy booking",
    error_identification="cancelled without checking insurance",
    root_cause_analysis="policy not consulted",
    correct_approach="check insurance and membership first",
    key_insight="verify cancellation eligibility before cancelling",
)

ISSUE = "In tau-airline cancel_reservation, basic economy bookings without insurance cannot be cancelled."
WIDER_ISSUE = "Across airline and retail cancellation APIs, cancellation eligibility depends on fare rules."
INSIGHT = "Check fare class and insurance before calling cancel_reservation."


def _returns(messages: list[Any], tool_name: str) -> list[Any]:
    return [
        part.content
        for part in messages[-1].parts
        if isinstance(part, ToolReturnPart) and part.tool_name == tool_name and part.outcome != "retried"
    ]


def _retries(messages: list[Any]) -> list[str]:
    """The ModelRetry messages the model was sent back in the latest request."""
    return [str(part.content) for part in messages[-1].parts if getattr(part, "outcome", None) == "retried"]


def _finalize(reasoning: str = "done") -> list[ToolCallPart]:
    return [ToolCallPart("finalize", {"reasoning": reasoning})]


def _manager(model: Any, embedder: Any, **kwargs: Any) -> SkillManager:
    return SkillManager(model, embedder=embedder, **kwargs)


async def test_adds_then_widens_a_skill_through_tool_calls(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    def widen(messages: list[Any]) -> list[ToolCallPart]:
        (added,) = _returns(messages, "add_skill")
        return [
            ToolCallPart(
                "update_skill",
                {"skill_id": added["skill_id"], "issue": WIDER_ISSUE, "keywords": ["cancellation", "retail"]},
            )
        ]

    model = script(
        [ToolCallPart("search_skills", {"query": "cancel basic economy"})],
        [
            ToolCallPart(
                "add_skill",
                {"section": "context", "issue": ISSUE, "keywords": ["airline", "cancellation"], "insight": INSIGHT},
            )
        ],
        widen,
        _finalize("added then widened"),
    )

    output = await _manager(model.model, embedder).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=source
    )

    (skill,) = skillbook.skills()
    assert (skill.issue, skill.insight) == (WIDER_ISSUE, INSIGHT)
    assert skill.keywords == ("cancellation", "retail")
    assert [o.operation_type for o in skill.occurrences] == ["ADD", "UPDATE"]
    assert {o.trace_uid for o in skill.occurrences} == {source.trace_uid}
    assert [(op.type, op.skill_id) for op in output.operations] == [("ADD", skill.id), ("UPDATE", skill.id)]
    assert output.reasoning == "added then widened"


async def test_context_skill_without_insight_is_retried_and_the_corrected_call_succeeds(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    retry_messages: list[str] = []

    def correct(messages: list[Any]) -> list[ToolCallPart]:
        retry_messages.extend(_retries(messages))
        return [
            ToolCallPart(
                "add_skill",
                {"section": "context", "issue": ISSUE, "keywords": ["airline"], "insight": INSIGHT},
            )
        ]

    model = script(
        [ToolCallPart("add_skill", {"section": "context", "issue": ISSUE, "keywords": ["airline"], "insight": None})],
        correct,
        _finalize(),
    )

    output = await _manager(model.model, embedder).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=source
    )

    assert len(retry_messages) == 1 and "insight" in retry_messages[0]
    (skill,) = skillbook.skills()
    assert skill.insight == INSIGHT
    assert [op.type for op in output.operations] == ["ADD"]


async def test_tag_skill_counts_injected_skills_and_rejects_others(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    injected = skillbook.add_skill("context", ISSUE, ["airline"], INSIGHT)
    bystander = skillbook.add_skill("harness", "tau2 simulator retries slowly", ["tau2"])
    retries: list[str] = []

    def after_tags(messages: list[Any]) -> list[ToolCallPart]:
        retries.extend(_retries(messages))
        return _finalize()

    model = script(
        [
            ToolCallPart("tag_skill", {"skill_id": injected.id, "delta": 1}),
            ToolCallPart("tag_skill", {"skill_id": bystander.id, "delta": -1}),
        ],
        after_tags,
    )

    output = await _manager(model.model, embedder).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=source, injected_skill_ids=[injected.id]
    )

    assert skillbook.get_skill(injected.id).helpful_count == 1
    assert skillbook.get_skill(bystander.id).harmful_count == 0
    assert len(retries) == 1 and bystander.id in retries[0] and injected.id in retries[0]
    assert [(op.type, op.skill_id, op.delta) for op in output.operations] == [("TAG", injected.id, 1)]
    assert skillbook.get_skill(injected.id).occurrences[-1].operation_type == "TAG"


async def test_remove_skill_is_a_soft_delete_with_its_reason_logged(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    skill = skillbook.add_skill("context", ISSUE, ["airline"], INSIGHT)
    model = script(
        [ToolCallPart("read_skill", {"skill_id": skill.id})],
        [ToolCallPart("remove_skill", {"skill_id": skill.id, "reason": "harmful_count reached 3"})],
        _finalize(),
    )

    output = await _manager(model.model, embedder).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=source
    )

    assert len(skillbook.skills()) == 0
    assert skillbook.get_skill(skill.id).active is False
    assert [(op.type, op.reason) for op in output.operations] == [("REMOVE", "harmful_count reached 3")]


async def test_read_tools_show_counters(script, skillbook: Skillbook, source: InsightSource, embedder) -> None:
    skill = skillbook.add_skill("context", ISSUE, ["airline", "cancellation"], INSIGHT)
    skillbook.tag_skill(skill.id, -1)
    seen: dict[str, Any] = {}

    def inspect(messages: list[Any]) -> list[ToolCallPart]:
        (seen["read"],) = _returns(messages, "read_skill")
        (seen["search"],) = _returns(messages, "search_skills")
        return _finalize()

    model = script(
        [
            ToolCallPart("read_skill", {"skill_id": skill.id}),
            ToolCallPart("search_skills", {"query": "cancel basic economy insurance", "keywords": ["airline"]}),
        ],
        inspect,
    )

    await _manager(model.model, embedder).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    assert seen["read"]["counters"]["harmful_count"] == 1
    assert [hit["id"] for hit in seen["search"]] == [skill.id]
    assert seen["search"][0]["counters"]["harmful_count"] == 1


async def test_budget_exhaustion_raises_with_the_operations_it_rolled_back(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    add = [
        ToolCallPart(
            "add_skill", {"section": "harness", "issue": "tau2 slow retries", "keywords": ["tau2"], "insight": None}
        )
    ]
    search = [ToolCallPart("search_skills", {"query": "anything"})]
    model = script(add, *([search] * 10))

    with pytest.raises(SkillManagerIncompleteError) as raised:
        await _manager(model.model, embedder, config=AgenticConfig(max_requests=3)).update_skills(
            reflections=[REFLECTION], skillbook=skillbook, source=source
        )

    assert [op.type for op in raised.value.operations] == ["ADD"]
    assert skillbook.skills() == []
    assert len(model.requests) == 3


async def test_failed_reflections_never_reach_the_model(script, skillbook: Skillbook, source: InsightSource) -> None:
    model = script()

    output = await SkillManager(model.model).update_skills(
        reflections=[ReflectorOutput.failure("rr budget exhausted")], skillbook=skillbook, source=source
    )

    assert model.requests == []
    assert output.operations == ()
    assert "rr budget exhausted" in output.reasoning


async def test_prompt_holds_usable_reflections_and_injected_ids_only(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    skill = skillbook.add_skill("context", ISSUE, ["airline"], INSIGHT)
    model = script(_finalize())

    await SkillManager(model.model).update_skills(
        reflections=[REFLECTION, ReflectorOutput.failure("sandbox timed out")],
        skillbook=skillbook,
        source=source,
        injected_skill_ids=[skill.id],
        question_context="airline customer service",
        progress="sample 3 of 10",
    )

    prompt = "\n".join(
        str(part.content) for part in model.requests[0][0].parts if getattr(part, "part_kind", "") == "user-prompt"
    )
    assert REFLECTION.key_insight in prompt
    assert "sandbox timed out" not in prompt
    assert skill.id in prompt
    assert "airline customer service" in prompt and "sample 3 of 10" in prompt


async def test_single_request_budget_is_one_tool_call_pass_that_must_finalize(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    model = script(
        [
            ToolCallPart(
                "add_skill", {"section": "harness", "issue": "tau2 slow retries", "keywords": ["tau2"], "insight": None}
            )
        ]
    )

    with pytest.raises(SkillManagerIncompleteError, match="without finalize") as raised:
        await _manager(model.model, embedder, config=AgenticConfig(max_requests=1)).update_skills(
            reflections=[REFLECTION], skillbook=skillbook, source=source
        )

    assert [op.type for op in raised.value.operations] == ["ADD"]
    assert skillbook.skills() == [] and len(model.requests) == 1


async def test_invalid_search_arguments_are_retried_not_raised(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    retries: list[str] = []

    def after_search(messages: list[Any]) -> list[ToolCallPart]:
        retries.extend(_retries(messages))
        return _finalize()

    model = script([ToolCallPart("search_skills", {"query": "cancel", "top_k": 0})], after_search)

    await _manager(model.model, embedder).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    assert len(retries) == 1 and "top_k" in retries[0]


async def test_default_skill_manager_offers_exactly_the_seed_tools_and_tag_skill_only_with_injections(
    skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    injected = skillbook.add_skill("context", ISSUE, ["airline"], INSIGHT)
    offered: list[set[str]] = []

    def record(messages: list[Any], info: Any) -> ModelResponse:
        offered.append({tool.name for tool in info.function_tools} | {tool.name for tool in info.output_tools})
        return ModelResponse(parts=_finalize())

    for injected_ids in ([injected.id], []):
        await _manager(FunctionModel(record), embedder).update_skills(
            reflections=[REFLECTION], skillbook=skillbook, source=source, injected_skill_ids=injected_ids
        )

    seed_tools = {"add_skill", "update_skill", "tag_skill", "remove_skill", "search_skills", "read_skill", "finalize"}
    assert offered == [seed_tools, seed_tools - {"tag_skill"}]


async def test_a_tool_rejected_more_often_than_tool_retries_ends_the_session_as_incomplete(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    # Each tool may be rejected AgenticConfig.tool_retries times in a row (docs/agentic.md).
    unknown = [ToolCallPart("read_skill", {"skill_id": "context-09999"})]
    model = script(unknown, unknown, _finalize())
    manager = _manager(model.model, embedder, config=AgenticConfig(tool_retries=1))

    with pytest.raises(SkillManagerIncompleteError, match="read_skill") as raised:
        await manager.update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    assert raised.value.operations == ()
    assert len(model.requests) == 2


async def test_default_tool_retries_let_the_model_correct_twice(
    script, skillbook: Skillbook, source: InsightSource, embedder
) -> None:
    unknown = [ToolCallPart("read_skill", {"skill_id": "context-09999"})]
    model = script(unknown, unknown, _finalize("gave up on that id"))

    output = await _manager(model.model, embedder).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=source
    )

    assert output.reasoning == "gave up on that id"
    assert len(model.requests) == 3


async def test_an_unknown_id_is_answered_with_the_closest_ids_and_a_trace_id_is_named_as_such(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    existing = skillbook.add_skill("context", ISSUE, ["airline"], INSIGHT).id
    model = script(
        [ToolCallPart("update_skill", {"skill_id": "context-0001", "issue": WIDER_ISSUE})],
        [ToolCallPart("tag_skill", {"skill_id": source.trace_uid, "delta": 1})],
        _finalize("gave up"),
    )

    await SkillManager(model.model).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=source, injected_skill_ids=[existing]
    )

    assert f"the closest existing ids are {existing}" in _retries(model.requests[1])[0]
    assert f"{source.trace_uid!r} is the id of a trace, not of a skill" in _retries(model.requests[2])[0]


async def test_a_tool_name_given_as_a_skill_id_is_named_as_such_and_points_to_add_skill(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    # Seen with a 1.5B SkillManager: after a search without match it updated, then removed,
    # "search_skills" until its retries ran out.
    skillbook.add_skill("context", ISSUE, ["airline"], INSIGHT)
    model = script(
        [ToolCallPart("update_skill", {"skill_id": "search_skills", "issue": WIDER_ISSUE})],
        [ToolCallPart("remove_skill", {"skill_id": "finalize", "reason": "does not exist"})],
        _finalize("gave up"),
    )

    await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    for request, name in zip(model.requests[1:3], ("search_skills", "finalize"), strict=True):
        [retry] = _retries(request)
        assert retry.startswith(f"{name!r} is the name of a tool, not the id of a skill") and "add_skill" in retry


async def test_a_finalize_claiming_an_operation_that_never_happened_is_flagged(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    model = script(_finalize("I removed the outdated skill and added a new one."))

    output = await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    assert output.operations == () and output.finished
    assert output.unbacked_claims == ("ADD", "REMOVE")


def test_claims_that_are_negated_or_backed_by_an_operation_are_not_flagged() -> None:
    tag = UpdateOperation(type="TAG", section="context", skill_id="context-00001", delta=1)

    assert unbacked_claims("Nothing was added: the reflection teaches nothing new.", ()) == ()
    assert unbacked_claims("I did not remove anything.", ()) == ()
    assert unbacked_claims("Tagged context-00001 helpful.", (tag,)) == ()


def _user_prompt_of(messages: list[Any]) -> str:
    return next(part.content for part in messages[0].parts if getattr(part, "part_kind", "") == "user-prompt")


async def test_the_prompt_says_whether_the_skillbook_is_empty(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    empty = script(_finalize())
    await SkillManager(empty.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)
    skillbook.add_skill("context", ISSUE, ["airline"], INSIGHT)
    one = script(_finalize())
    await SkillManager(one.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    assert (
        "<skillbook>\nempty: there is no skill to search, update or tag yet; keep a new lesson with add_skill"
        in _user_prompt_of(empty.requests[0])
    )
    assert "<skillbook>\n1 active skill(s)" in _user_prompt_of(one.requests[0])


async def test_naming_the_trace_id_in_an_empty_skillbook_points_to_add_skill(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    model = script(
        [ToolCallPart("update_skill", {"skill_id": source.trace_uid, "issue": ISSUE})],
        [
            ToolCallPart(
                "add_skill", {"section": "context", "issue": ISSUE, "keywords": ["airline"], "insight": INSIGHT}
            )
        ],
        _finalize(),
    )

    output = await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    retry = _retries(model.requests[1])[0]
    assert (
        "is the id of a trace" in retry
        and "The skillbook holds no skill yet: keep a new lesson with add_skill" in retry
    )
    assert [operation.type for operation in output.operations] == ["ADD"]


async def test_an_update_that_changes_nothing_is_refused_and_points_to_add_skill(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    existing = skillbook.add_skill("context", ISSUE, ["airline", "cancel"], INSIGHT)
    model = script(
        [
            ToolCallPart(
                "update_skill",
                {"skill_id": existing.id, "issue": ISSUE, "keywords": ["Airline", "cancel"], "insight": INSIGHT},
            )
        ],
        [ToolCallPart("update_skill", {"skill_id": existing.id, "issue": ISSUE})],
        _finalize(),
    )

    output = await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    for request in model.requests[1:]:
        assert "update_skill changed nothing" in _retries(request)[0] and "add_skill" in _retries(request)[0]
    assert output.operations == ()
    assert skillbook.get_skill(existing.id) == existing  # no UPDATE occurrence was recorded


async def test_repeating_what_the_session_just_added_is_a_no_op_that_costs_no_retry(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    # Seen with a 1.5B SkillManager: after add_skill it re-sent the same skill through update_skill
    # until its retries ran out, and the failed session undid the lesson it had added.
    fields = {"issue": ISSUE, "keywords": ["airline", "cancel"], "insight": INSIGHT}
    repeat = ToolCallPart("update_skill", {"skill_id": "context-00001", **fields})
    model = script(
        [ToolCallPart("add_skill", {"section": "context", **fields})], [repeat], [repeat], [repeat], _finalize()
    )

    output = await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    assert [_returns(request, "update_skill")[0]["changed"] for request in model.requests[2:5]] == [False] * 3
    assert all(_retries(request) == [] for request in model.requests[1:])
    assert [operation.type for operation in output.operations] == ["ADD"]
    [skill] = skillbook.skills()
    assert (skill.issue, skill.insight, [o.operation_type for o in skill.occurrences]) == (ISSUE, INSIGHT, ["ADD"])


DATE_QUESTION = "Order 45921 ships on June 9, 2022. Write the ship date as it must appear on the delivery note."
DATE_ISSUE = "Writing a date on a delivery note, such as the date an order ships"
DATE_INSIGHT = "Write delivery-note dates as YYYY.MM.DD: June 9, 2022 -> 2022.06.09."


def _date_skill(skillbook: Skillbook) -> str:
    learned_from = InsightSource(trace_uid="bench:train-1", sample_question=DATE_QUESTION)
    return skillbook.add_skill(
        "context", DATE_ISSUE, ["delivery note", "date format"], DATE_INSIGHT, insight_source=learned_from
    ).id


async def test_an_update_whose_issue_leaves_the_skills_own_tasks_is_refused_and_points_to_add_skill(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    skill_id = _date_skill(skillbook)
    replaced = {"skill_id": skill_id, "issue": "Writing a parcel's weight on a shipping label"}
    weight_lesson = {
        "section": "context",
        "issue": "Writing a parcel's weight on a shipping label",
        "keywords": ["shipping label", "weight"],
        "insight": "Give the weight in whole grams: 2.5 kg -> 2500 g.",
    }
    model = script([ToolCallPart("update_skill", replaced)], [ToolCallPart("add_skill", weight_lesson)], _finalize())

    output = await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    (retry,) = _retries(model.requests[1])
    assert "update_skill rejected" in retry and DATE_QUESTION in retry and "add_skill" in retry
    assert [operation.type for operation in output.operations] == ["ADD"]
    assert skillbook.get_skill(skill_id).issue == DATE_ISSUE
    assert len(skillbook.skills()) == 2


async def test_an_update_that_widens_the_issue_over_the_skills_own_tasks_is_applied(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    skill_id = _date_skill(skillbook)
    widened = "Writing a date on a delivery note or a packing slip, such as the date an order ships"
    model = script([ToolCallPart("update_skill", {"skill_id": skill_id, "issue": widened})], _finalize())

    output = await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    assert _retries(model.requests[1]) == []
    assert [operation.type for operation in output.operations] == ["UPDATE"]
    assert skillbook.get_skill(skill_id).issue == widened


def _learning_from(question: str) -> InsightSource:
    return InsightSource(trace_uid="bench:train-2", sample_question=question)


async def test_with_require_task_match_an_issue_that_misses_its_own_task_is_refused_until_it_names_the_task(
    script, skillbook: Skillbook
) -> None:
    the_answer_as_issue = {
        "section": "context",
        "issue": "the expected answer is in the format 'YYYY.MM.DD', not 'DD.MM.YYYY'",
        "keywords": ["date", "format"],
        "insight": DATE_INSIGHT,
    }
    the_task_as_issue = {**the_answer_as_issue, "issue": DATE_ISSUE}
    model = script(
        [ToolCallPart("add_skill", the_answer_as_issue)], [ToolCallPart("add_skill", the_task_as_issue)], _finalize()
    )

    output = await SkillManager(model.model, require_task_match=True).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=_learning_from(DATE_QUESTION)
    )

    (retry,) = _retries(model.requests[1])
    assert "add_skill rejected" in retry and DATE_QUESTION in retry
    assert _retries(model.requests[2]) == []
    assert [operation.type for operation in output.operations] == ["ADD"]
    assert [skill.issue for skill in skillbook.skills()] == [DATE_ISSUE]


async def test_with_require_task_match_an_issue_refused_twice_is_answered_with_the_task_as_the_issue_to_use(
    script, skillbook: Skillbook
) -> None:
    lesson_as_issue = {
        "section": "context",
        "issue": "When a task requires a date in a specific format, write it in the format the note needs",
        "keywords": ["date", "format"],
        "insight": DATE_INSIGHT,
    }
    model = script(
        [ToolCallPart("add_skill", lesson_as_issue)],
        [ToolCallPart("add_skill", lesson_as_issue)],
        [ToolCallPart("add_skill", {**lesson_as_issue, "issue": DATE_QUESTION})],
        _finalize(),
    )

    output = await SkillManager(model.model, require_task_match=True).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=_learning_from(DATE_QUESTION)
    )

    (first,) = _retries(model.requests[1])
    (again,) = _retries(model.requests[2])
    assert f"issue={DATE_QUESTION!r}" not in first
    assert "rejected again" in again and f"issue={DATE_QUESTION!r}" in again
    assert [operation.type for operation in output.operations] == ["ADD"]
    assert [skill.issue for skill in skillbook.skills()] == [DATE_QUESTION]


async def test_with_require_task_match_an_update_that_does_not_cover_the_new_task_is_refused(
    script, skillbook: Skillbook
) -> None:
    skill_id = _date_skill(skillbook)
    weight_question = "The parcel for order 18904 weighs 6.25 kg. Write its weight for the shipping label."
    kept_to_dates = {"skill_id": skill_id, "issue": "Writing a date on a delivery note or an invoice"}
    model = script([ToolCallPart("update_skill", kept_to_dates)], _finalize())

    output = await SkillManager(model.model, require_task_match=True).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=_learning_from(weight_question)
    )

    (retry,) = _retries(model.requests[1])
    assert "update_skill rejected" in retry and weight_question in retry
    assert output.operations == ()
    assert skillbook.get_skill(skill_id).issue == DATE_ISSUE


async def test_without_require_task_match_an_issue_that_misses_its_own_task_is_added(
    script, skillbook: Skillbook
) -> None:
    off_task = {"section": "context", "issue": "Formatting numbers", "keywords": ["numbers"], "insight": DATE_INSIGHT}
    model = script([ToolCallPart("add_skill", off_task)], _finalize())

    output = await SkillManager(model.model).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=_learning_from(DATE_QUESTION)
    )

    assert _retries(model.requests[1]) == []
    assert [operation.type for operation in output.operations] == ["ADD"]


@pytest.mark.parametrize("issue", ["2022.06.09", " 2022-06-09. "], ids=["verbatim", "punctuation-aside"])
async def test_an_issue_that_is_only_the_expected_answer_is_refused_until_it_names_the_task(
    script, skillbook: Skillbook, issue: str
) -> None:
    answer_as_issue = {"section": "context", "issue": issue, "keywords": ["date"], "insight": DATE_INSIGHT}
    model = script(
        [ToolCallPart("add_skill", answer_as_issue)],
        [ToolCallPart("add_skill", {**answer_as_issue, "issue": DATE_ISSUE})],
        _finalize(),
    )

    output = await SkillManager(model.model).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=_learning_from(DATE_QUESTION), ground_truth="2022.06.09"
    )

    (retry,) = _retries(model.requests[1])
    assert "is the expected answer, not the kind of task" in retry and DATE_QUESTION in retry
    assert [skill.issue for skill in skillbook.skills()] == [DATE_ISSUE] and len(output.operations) == 1


async def test_an_issue_that_holds_more_than_the_expected_answer_is_not_refused_for_it(
    script, skillbook: Skillbook
) -> None:
    issue = "Writing the date 2022.06.09 on a delivery note"
    model = script(
        [
            ToolCallPart(
                "add_skill", {"section": "context", "issue": issue, "keywords": ["date"], "insight": DATE_INSIGHT}
            )
        ],
        _finalize(),
    )

    await SkillManager(model.model).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=_learning_from(DATE_QUESTION), ground_truth="2022.06.09"
    )

    assert _retries(model.requests[1]) == []
    assert [skill.issue for skill in skillbook.skills()] == [issue]


async def test_rewriting_the_issue_of_a_skill_added_in_the_same_session_points_to_its_insight(
    script, skillbook: Skillbook
) -> None:
    added = {"section": "context", "issue": DATE_ISSUE, "keywords": ["date"], "insight": "Use the house format."}
    lesson_as_issue = {"skill_id": "context-00001", "issue": "Writing a parcel's weight on a shipping label"}
    new_insight = {"skill_id": "context-00001", "issue": DATE_ISSUE, "insight": DATE_INSIGHT}
    model = script(
        [ToolCallPart("add_skill", added)],
        [ToolCallPart("update_skill", lesson_as_issue)],
        [ToolCallPart("update_skill", new_insight)],
        _finalize(),
    )

    output = await SkillManager(model.model).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=_learning_from(DATE_QUESTION)
    )

    (retry,) = _retries(model.requests[2])
    assert "was just added for" in retry and "the lesson goes in insight" in retry
    assert "Keep this lesson with add_skill" not in retry
    assert [operation.type for operation in output.operations] == ["ADD", "UPDATE"]
    [skill] = skillbook.skills()
    assert (skill.issue, skill.insight) == (DATE_ISSUE, DATE_INSIGHT)


async def test_skill_fields_are_bounded_in_the_tool_schema_only_so_a_longer_argument_is_still_applied(
    skillbook: Skillbook, source: InsightSource
) -> None:
    offered: dict[str, dict[str, Any]] = {}
    long_insight = "Write delivery-note dates as YYYY.MM.DD. " * 20  # ~840 characters, past the schema's 600
    add = {"section": "context", "issue": DATE_ISSUE, "keywords": ["delivery note"], "insight": long_insight}
    turns = iter([[ToolCallPart("add_skill", add)], _finalize()])

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        offered.update({tool.name: tool.parameters_json_schema for tool in info.function_tools})
        return ModelResponse(parts=next(turns))

    output = await SkillManager(FunctionModel(respond)).update_skills(
        reflections=[REFLECTION], skillbook=skillbook, source=source
    )

    add_schema, update_schema = offered["add_skill"]["properties"], offered["update_skill"]["properties"]
    assert add_schema["issue"]["maxLength"] == update_schema["issue"]["maxLength"] == 400
    assert add_schema["keywords"]["maxItems"] == 5 and add_schema["keywords"]["items"]["maxLength"] == 40
    assert {"maxLength": 600, "type": "string"} in add_schema["insight"]["anyOf"]
    assert [operation.type for operation in output.operations] == ["ADD"]
    assert skillbook.skills()[0].insight == long_insight.strip()  # whole, past the schema bound


async def test_search_skills_finds_the_same_rule_restated_and_never_an_unrelated_skill_because_it_is_the_only_one(
    script, skillbook: Skillbook, source: InsightSource
) -> None:
    iso = skillbook.add_skill(
        "context",
        "when a task requires formatting a date in ISO 8601 format",
        ["date", "iso_8601"],
        "Format the date as YYYY-MM-DD: October 26, 2025 -> 2025-10-26.",
    )
    restated = "Format dates in ISO 8601 as YYYY-MM-DD: October 26, 2025 -> 2025-10-26."
    unrelated = "Write staff directory entries as SURNAME, Given name: Ben Garcia -> GARCIA, Ben."
    model = script(
        [ToolCallPart("search_skills", {"query": restated})],
        [ToolCallPart("search_skills", {"query": unrelated})],
        _finalize(),
    )

    await SkillManager(model.model).update_skills(reflections=[REFLECTION], skillbook=skillbook, source=source)

    (found,) = _returns(model.requests[1], "search_skills")
    (nothing,) = _returns(model.requests[2], "search_skills")
    assert [skill["id"] for skill in found] == [iso.id]
    assert nothing == {"matches": [], "next": "add_skill"}
