"""`run_bench` on FunctionModel roles: every arm on the same items, what each arm puts in the prompt,
learning through the loop, feedback modes, honest failures."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from bench_roles import (
    MARKER,
    SHOUT_RULE,
    ShoutAgent,
    quoting_reflector,
    shout_items,
    shout_skill_manager,
    shout_task_set,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.retrieval import SkillMatcher
from ace.skillbook import Skillbook
from ace_eval.bench.arms import ARMS, count_tokens
from ace_eval.bench.config import BenchConfig
from ace_eval.bench.items import BenchItem
from ace_eval.bench.preflight import BenchInputError
from ace_eval.bench.report import markdown, report_dict
from ace_eval.bench.runner import BenchReport, run_bench
from ace_eval.bench.scoring import pair_key
from ace_eval.bench.task_set import TaskSet
from ace_eval.scripted.messages import between, first_user_prompt


def _run(tmp_path: Path, agent: ShoutAgent | None = None, task_set: Any = None, **changes: Any) -> BenchReport:
    agent = agent or ShoutAgent()
    changes.setdefault("require_task_match", False)  # the matcher does not match the shout rule to "Say the word X."
    config = BenchConfig(output_dir=tmp_path / "run", **changes)
    models = {"agent": agent.model(), "reflector": quoting_reflector(), "skill_manager": shout_skill_manager()}
    return run_bench(config, task_set or shout_task_set(), log=lambda _: None, models=models)  # type: ignore[arg-type]


def _prompts_of(agent: ShoutAgent, marker: str) -> list[str]:
    return [prompt for prompt in agent.prompts if marker in prompt]


def test_every_arm_answers_the_same_items_and_trials(tmp_path: Path) -> None:
    report = _run(tmp_path, trials=2)

    expected = [(item.id, trial) for item in report.test_items for trial in range(2)]
    assert set(report.outcomes) == set(ARMS)
    for arm, outcomes in report.outcomes.items():
        assert [(o.item_id, o.trial) for o in outcomes] == expected, arm
    assert {(d.arm, d.baseline) for d in report.differences} >= {("learned", "none"), ("learned", "icl")}


def test_learning_runs_through_the_loop_and_the_arms_show_what_each_gives(tmp_path: Path) -> None:
    report = _run(tmp_path)

    assert [o.status for o in report.learning][:1] == ["learned"]  # the first wrong answer taught the rule
    assert [skill.insight for skill in report.skills] == [SHOUT_RULE.insight]
    assert report.failures == ()
    scores = {arm: score.accuracy for arm, score in report.scores.items()}
    assert scores["none"] == pytest.approx(2 / 6)  # the two controls only
    assert scores["all"] == scores["oracle"] == scores["icl"] == 1.0  # the rule, however it reaches the prompt
    none_vs_all = next(d for d in report.differences if (d.arm, d.baseline) == ("all", "none"))
    assert none_vs_all.fixed == ("test-1", "test-2", "test-3", "test-4")
    assert none_vs_all.broken == () and none_vs_all.control_pairs == 2
    assert none_vs_all.mcnemar_p == pytest.approx(2 / 16)


def test_learned_arm_injects_what_the_matcher_picks_for_each_task(tmp_path: Path) -> None:
    report = _run(tmp_path)

    assert report.skillbook_path is not None
    matcher = SkillMatcher(Skillbook.load_from_file(report.skillbook_path))
    questions = {item.id: item.question for item in report.test_items}
    for outcome in report.outcomes["learned"]:
        matched = tuple(match.skill_id for match in matcher.match(questions[outcome.item_id], 3))
        assert outcome.injected_skill_ids == matched


def test_icl_prompt_holds_the_training_items_and_their_feedback_within_the_budget(tmp_path: Path) -> None:
    agent = ShoutAgent()
    report = _run(tmp_path, agent, arms=("icl",))

    assert report.icl is not None and report.icl.included == report.icl.available == 3
    assert report.icl.tokens == count_tokens(report.icl.text) <= report.icl.budget
    icl_prompts = [p for p in agent.prompts if "Earlier tasks" in p]
    assert len(icl_prompts) == len(report.test_items)
    context = icl_prompts[0].partition("<context>")[2].partition("</context>")[0].strip()
    assert context == report.icl.text
    blocks = context.split("\n\n")[1:]
    assert len(blocks) == len(report.train_items)
    for item, block in zip(report.train_items, blocks):
        task, answer, feedback = block.split("\n")
        assert task == f"Task: {item.question}" and answer.startswith("Answer given: ")
        # labels: a wrong answer's feedback carries the expected answer
        assert feedback in ("Feedback: Correct.", f"Feedback: Incorrect. The expected answer is: {item.expected}")


def test_icl_experience_keeps_answers_whose_reflection_failed(tmp_path: Path) -> None:
    calls: list[int] = []

    def failing_reflector(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        if len(calls) == 2:  # the second training sample's reflection
            raise RuntimeError("the reflector fell over")
        return quoting_reflector().function(messages, info)  # type: ignore[misc, return-value]

    agent = ShoutAgent()
    config = BenchConfig(output_dir=tmp_path / "run", arms=("icl",))
    models = {
        "agent": agent.model(),
        "reflector": FunctionModel(failing_reflector),
        "skill_manager": shout_skill_manager(),
    }
    report = run_bench(config, shout_task_set(), log=lambda _: None, models=models)  # type: ignore[arg-type]

    assert [o.status for o in report.learning].count("failed") == 1
    assert report.icl is not None and report.icl.included == report.icl.available == len(report.train_items) == 3
    assert [line.partition("Task: ")[2] for line in report.icl.text.splitlines() if line.startswith("Task: ")] == [
        item.question for item in report.train_items
    ]


def test_icl_budget_keeps_whole_experiences_only(tmp_path: Path) -> None:
    full = _run(tmp_path / "full", arms=("icl",)).icl
    assert full is not None
    budget = full.tokens - 1  # one token short of all three experiences
    cut = _run(tmp_path / "cut", arms=("icl",), icl_budget=budget).icl
    assert cut is not None
    assert cut.included == 2 and cut.tokens <= budget
    assert cut.text.count("Task: ") == 2 and cut.text == full.text.rpartition("\n\nTask: ")[0]


def test_oracle_arm_injects_exactly_the_true_rule_and_nothing_on_controls(tmp_path: Path) -> None:
    agent = ShoutAgent()
    report = _run(tmp_path, agent, arms=("oracle",))

    by_question = {p.partition("<question>")[2].partition("</question>")[0].strip(): p for p in agent.prompts}
    for item in report.test_items:
        prompt = by_question[item.question]
        skills = prompt.partition("<skills>")[2].partition("</skills>")[0]
        if item.control:
            assert "<skills>" not in prompt
        else:
            assert SHOUT_RULE.insight in skills and SHOUT_RULE.issue in skills
            assert len(re.findall(r"\[context-\d+\]", skills)) == 1
    assert {len(o.injected_skill_ids) for o in report.outcomes["oracle"] if not o.item_id.startswith("control")} == {1}


def test_harm_on_controls_is_counted_against_none(tmp_path: Path) -> None:
    report = _run(tmp_path, ShoutAgent(overeager=True), arms=("none", "oracle", "all"))

    all_vs_none = next(d for d in report.differences if (d.arm, d.baseline) == ("all", "none"))
    assert all_vs_none.controls_broken == ("control-1", "control-2")
    assert all_vs_none.control_harm == 1.0
    oracle_vs_none = next(d for d in report.differences if (d.arm, d.baseline) == ("oracle", "none"))
    assert oracle_vs_none.controls_broken == ()  # the oracle injects nothing on a control


def test_harm_target_counts_the_broken_controls_that_got_no_skill(tmp_path: Path) -> None:
    shout, task_set = ShoutAgent(), shout_task_set()
    [question] = [item.question for item in task_set.items if item.id == "control-1"]
    asked: list[str] = []

    def second_answer_wrong(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The ShoutAgent, but control-1 is answered wrong the second time it is asked."""
        if question in first_user_prompt(messages):
            asked.append(question)
            if len(asked) == 2:
                wrong = {"reasoning": "r", "answer": "not the word"}
                return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, wrong)])
        return shout.model().function(messages, info)  # type: ignore[misc, return-value]

    config = BenchConfig(output_dir=tmp_path / "run", arms=("none", "learned"), require_task_match=False)
    models = {
        "agent": FunctionModel(second_answer_wrong),
        "reflector": quoting_reflector(),
        "skill_manager": shout_skill_manager(),
    }
    report = run_bench(config, task_set, log=lambda _: None, models=models)  # type: ignore[arg-type]
    data = report_dict(report)

    [control] = [o for o in report.outcomes["learned"] if o.item_id == "control-1"]
    assert not control.correct and control.injected_skill_ids == ()
    harm = data["targets"]["control_harm_at_most_2_percent"]
    assert (harm["broken"], harm["broken_with_no_skill_injected"], harm["met"]) == (1, 1, False)
    assert harm["share_ci95"] == pytest.approx([1 - 0.975**0.5, 0.975**0.5])  # exact interval of 1 of 2
    assert "1 of 2 broken (50%; exact 95% interval 1.3% to 98.7%), 1 of them with no skill injected" in markdown(
        report, data
    )


def test_verdict_feedback_never_shows_the_expected_answer(tmp_path: Path) -> None:
    seen: list[str] = []

    def reflector(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        from ace_eval.scripted.messages import first_user_prompt

        seen.append(first_user_prompt(messages))
        return quoting_reflector().function(messages, info)  # type: ignore[misc, return-value]

    agent = ShoutAgent()
    config = BenchConfig(output_dir=tmp_path / "run", feedback="verdict", arms=("none", "icl"))
    models = {"agent": agent.model(), "reflector": FunctionModel(reflector), "skill_manager": shout_skill_manager()}
    report = run_bench(config, shout_task_set(), log=lambda _: None, models=models)  # type: ignore[arg-type]

    assert seen and all("<feedback>\nIncorrect.\n</feedback>" in p for p in seen)
    assert not any("RIVER!" in p or "<ground_truth>" in p for p in seen)
    assert report.icl is not None and "RIVER!" not in report.icl.text and "Feedback: Incorrect." in report.icl.text


def test_an_agent_that_raises_fails_its_answer_only(tmp_path: Path) -> None:
    def flaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        from ace_eval.scripted.messages import first_user_prompt

        prompt = first_user_prompt(messages)
        if "cloud" in prompt or "piano" in prompt:
            raise RuntimeError("the model fell over")
        return ShoutAgent().model().function(messages, info)  # type: ignore[misc, return-value]

    config = BenchConfig(output_dir=tmp_path / "run", arms=("none", "oracle"))
    models = {"agent": FunctionModel(flaky), "reflector": quoting_reflector(), "skill_manager": shout_skill_manager()}
    report = run_bench(config, shout_task_set(), log=lambda _: None, models=models)  # type: ignore[arg-type]

    failed = [o for o in report.outcomes["none"] if o.error is not None]
    assert [pair_key(o) for o in failed] == ["test-1", "control-1"]
    assert all(not o.correct and o.answer is None for o in failed)
    assert len(report.failures) == 4 and all("the model fell over" in line for line in report.failures)
    assert len(report.outcomes["none"]) == len(report.test_items)


def test_prompt_tokens_per_item_come_from_the_agents_metered_requests(tmp_path: Path) -> None:
    report = _run(tmp_path)

    for arm in ARMS:
        phase = next(p for p in report.phases if p.name == f"arm: {arm}")
        assert report.prompt_tokens_per_item(arm) == phase.usage["agent"].input_tokens / len(report.test_items)
    tokens = {arm: report.prompt_tokens_per_item(arm) for arm in ARMS}
    assert tokens["icl"] > tokens["all"] > tokens["none"]  # type: ignore[operator]
    learning = next(p for p in report.phases if p.name == "learning")
    assert set(learning.usage) == {"agent", "reflector", "skill_manager"}


def test_the_learned_rule_reaches_the_agent_only_through_an_arm(tmp_path: Path) -> None:
    agent = ShoutAgent()
    report = _run(tmp_path, agent, arms=("none", "all"))

    assert report.skills  # learning happened: the learned skillbook holds the rule
    train, test = len(report.train_items), len(report.test_items)
    none_prompts, all_prompts = agent.prompts[train : train + test], agent.prompts[train + test :]
    questions = [item.question for item in report.test_items]
    for prompts in (none_prompts, all_prompts):
        assert [p.partition("<question>")[2].partition("</question>")[0].strip() for p in prompts] == questions
    assert not any(MARKER in p for p in none_prompts)
    assert all(MARKER in p for p in all_prompts)


def test_by_default_a_skill_the_matcher_would_not_match_to_its_own_question_is_not_learned(tmp_path: Path) -> None:
    report = _run(tmp_path, require_task_match=True, arms=("none", "learned"))

    assert report.skills == ()  # learned with require_task_match=False (see the test above)
    assert report.learning[0].status == "nothing learned"


def test_learning_from_failures_leaves_a_right_training_answer_alone_but_keeps_it_for_icl(tmp_path: Path) -> None:
    control = BenchItem("train-control", "train", "Repeat the word frost.", "frost", control=True)
    task_set = TaskSet(name="shout", items=(control, *shout_items(train=1)), rules={"shout": SHOUT_RULE})
    reflected: list[str] = []

    def recording_reflector(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reflected.append(re.sub(r"\s+", " ", between(first_user_prompt(messages), "<question>", "</question>")).strip())
        return quoting_reflector().function(messages, info)  # type: ignore[misc, return-value]

    config = BenchConfig(
        output_dir=tmp_path / "run", arms=("learned", "icl"), learn_from="failures", require_task_match=False
    )
    models = {
        "agent": ShoutAgent().model(),
        "reflector": FunctionModel(recording_reflector),
        "skill_manager": shout_skill_manager(),
    }
    report = run_bench(config, task_set, log=lambda _: None, models=models)  # type: ignore[arg-type]

    assert reflected == ["Say the word apple."]
    assert [(o.task_id, o.status) for o in report.learning] == [
        ("train-control", "nothing learned"),
        ("train-1", "learned"),
    ]
    assert (
        report.learning[0].detail == "not learned from: a full success with no skill injected (learn_from='failures')"
    )
    assert report.icl is not None and report.icl.included == 2  # the raw experience keeps every graded answer
    assert report_dict(report)["learn_from"] == "failures"


def test_recheck_undoes_a_lesson_the_matcher_would_not_bring_back_to_its_own_item(tmp_path: Path) -> None:
    # The matcher does not match the shout rule to "Say the word X." (see _run), so answering the
    # item again with the skillbook as the session left it gets no skill and fails: finalize is
    # refused once (the shout SkillManager just finalizes again), then the session is undone.
    agent = ShoutAgent()
    report = _run(tmp_path, agent, arms=("learned",), recheck=True)

    asked = [between(prompt, "<question>", "</question>").strip() for prompt in agent.prompts]
    assert [asked.count(item.question) for item in report.train_items] == [3, 3, 3]  # the recheck, once revised
    assert [o.status for o in report.learning] == ["nothing learned"] * 3
    assert report.learning[0].detail == (
        "undone (ADD context-00001): the lesson did not fix its own task: answering it again with skills none, "
        "the agent said 'apple' (reward 0; feedback: Incorrect. The expected answer is: APPLE!)"
    )
    assert report.skills == ()
    assert report_dict(report)["recheck"] is True


def test_worked_examples_put_the_labelled_answer_into_the_learned_skill(tmp_path: Path) -> None:
    report = _run(tmp_path, arms=("learned",), worked_examples=True)

    first = report.train_items[0]
    assert [skill.insight for skill in report.skills] == [
        f"{SHOUT_RULE.insight} Example: {first.question!r} -> {first.expected!r}"
    ]
    assert report_dict(report)["worked_examples"] is True


def test_the_counterexample_check_is_named_in_the_report(tmp_path: Path) -> None:
    report = _run(tmp_path, arms=("learned",), counterexamples=True)

    data = report_dict(report)
    assert data["counterexamples"] is True
    assert "counterexamples checked" in markdown(report, data)


def test_confirm_retires_a_lesson_no_second_training_item_backs_and_reports_it(tmp_path: Path) -> None:
    # The matcher does not match the shout rule to "Say the word X." (see _run): the lesson learned
    # from the first training item reaches no other, so nothing confirms it.
    report = _run(tmp_path, arms=("none", "learned"), confirm=True)

    assert [o.status for o in report.learning][:1] == ["learned"]
    assert report.skills == () and [skill.insight for skill in report.retired] == [SHOUT_RULE.insight]
    assert [o.correct for o in report.outcomes["learned"]] == [o.correct for o in report.outcomes["none"]]
    data = report_dict(report)
    assert data["confirm"] is True
    [retired] = data["retired"]
    assert retired["backed_by"] == ["ace:train-1"] and retired["reason"].startswith("not confirmed: backed by 1 task")
    assert f"- **{retired['id']}**: issue: {SHOUT_RULE.issue}" in markdown(report, data)


def test_without_confirm_the_same_lesson_is_kept(tmp_path: Path) -> None:
    report = _run(tmp_path, arms=("learned",))

    assert [skill.insight for skill in report.skills] == [SHOUT_RULE.insight] and report.retired == ()
    assert report_dict(report)["skills"][0]["backed_by"] == ["ace:train-1"]


def test_a_saved_skillbook_is_scored_without_a_learning_phase(tmp_path: Path) -> None:
    learned = _run(tmp_path / "first", arms=("none", "learned"))
    assert learned.skillbook_path is not None
    saved = learned.skillbook_path.read_bytes()
    agent = ShoutAgent()

    report = _run(tmp_path / "second", agent, skillbook=learned.skillbook_path, arms=("none", "learned", "all"))

    assert report.learning == () and report.train_items == ()
    assert [phase.name for phase in report.phases] == ["arm: none", "arm: learned", "arm: all"]
    assert len(agent.prompts) == 3 * len(report.test_items)  # no training answer: only the arms asked
    assert [skill.insight for skill in report.skills] == [SHOUT_RULE.insight]
    assert report.skillbook_path == tmp_path / "second" / "run" / "skillbook.json"
    assert report.scores["all"].accuracy == 1.0 and report.scores["none"].accuracy == pytest.approx(2 / 6)
    assert learned.skillbook_path.read_bytes() == saved  # the arms answer with copies
    assert "no learning phase: the skills of" in markdown(report, report_dict(report))
    assert report_dict(report)["saved_skillbook"] == str(learned.skillbook_path)


def test_the_icl_arm_needs_a_learning_phase_and_a_saved_skillbook_must_load(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")

    with pytest.raises(BenchInputError, match="leave icl out of --arms"):
        _run(tmp_path, skillbook=broken, arms=("none", "icl"))
    for path in (broken, tmp_path / "missing.json"):
        with pytest.raises(
            BenchInputError, match=rf"--skillbook {re.escape(str(path))}: cannot load it \(.+\); give a"
        ):
            _run(tmp_path, skillbook=path, arms=("none", "learned"))
    assert not (tmp_path / "run").exists()  # refused before the run folder was made
