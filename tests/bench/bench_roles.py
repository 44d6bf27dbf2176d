"""FunctionModel roles and a tiny task set for the bench tests: stateless, each decides from its messages.

The task set has one hidden rule, `shout`: "Say the word W." is answered `W!` in capitals. Control
items ("Repeat the word W.") are answered with the word as it is. The roles:

- agent: records every user prompt it is sent (in `prompts`); it shouts when the part of its prompt
  before the question holds the marker SHOUT (a skill's insight) or a shouted answer such as
  `APPLE!` (the icl arm's pasted labels) and the task says "Say" - or, with `overeager`, whenever
  such a hint is there, which breaks the controls;
- reflector: a fixed analysis quoting the feedback;
- skill manager: adds one skill on a wrong answer to a "Say" task when no skill was injected (its
  insight carries SHOUT), tags injected skills by the outcome, and finalizes.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.bench.items import BenchItem
from ace_eval.bench.task_set import RuleSkill, TaskSet
from ace_eval.scripted.messages import between, first_user_prompt, tool_returns

MARKER = "SHOUT"
SHOUT_RULE = RuleSkill(
    issue="Saying a word when a task asks to say it",
    insight=f"{MARKER}: say the word in capitals followed by !",
    keywords=("say", "word"),
)
_HINT = re.compile(rf"{MARKER}|\b[A-Z]{{3,}}!")
_WORDS = ("apple", "river", "stone", "cloud", "maple", "tiger", "lemon", "piano", "ocean", "amber", "cedar", "frost")


def shout_items(*, train: int = 3, test: int = 4, controls: int = 2) -> tuple[BenchItem, ...]:
    """`train` training and `test` test items under the rule, then `controls` test controls."""
    words = iter(_WORDS)
    items = [
        BenchItem(f"train-{i}", "train", f"Say the word {w}.", f"{w.upper()}!", rule="shout")
        for i, w in zip(range(1, train + 1), words)
    ]
    items += [
        BenchItem(f"test-{i}", "test", f"Say the word {w}.", f"{w.upper()}!", rule="shout")
        for i, w in zip(range(1, test + 1), words)
    ]
    items += [
        BenchItem(f"control-{i}", "test", f"Repeat the word {w}.", w, control=True)
        for i, w in zip(range(1, controls + 1), words)
    ]
    return tuple(items)


def shout_task_set(**counts: int) -> TaskSet:
    """The items of `shout_items` with the rule stated (so the oracle arm can run)."""
    return TaskSet(name="shout", items=shout_items(**counts), rules={"shout": SHOUT_RULE})


def write_task_file(path: Path, items: tuple[BenchItem, ...], *, extra_lines: tuple[str, ...] = ()) -> Path:
    """The items as a JSONL task file, followed by `extra_lines` as they are."""
    import json

    lines = [
        json.dumps(
            {
                "id": i.id,
                "split": i.split,
                "question": i.question,
                "expected": i.expected,
                **({"rule": i.rule} if i.rule else {}),
                **({"control": True} if i.control else {}),
            }
        )
        for i in items
    ]
    path.write_text("\n".join([*lines, *extra_lines]) + "\n", encoding="utf-8")
    return path


class ShoutAgent:
    """The agent described in the module docstring, with the prompts it was sent."""

    def __init__(self, *, overeager: bool = False) -> None:
        self.prompts: list[str] = []
        self.overeager = overeager

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            prompt = first_user_prompt(messages)
            self.prompts.append(prompt)
            question = between(prompt, "<question>", "</question>").strip()
            word = question.rstrip(".").split()[-1]
            hinted = _HINT.search(prompt.partition("<question>")[0]) is not None
            shout = hinted and (self.overeager or question.startswith("Say"))
            answer = f"{word.upper()}!" if shout else word
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"reasoning": "r", "answer": answer})])

        return FunctionModel(respond, model_name="test-shout-agent")


def quoting_reflector() -> FunctionModel:
    """A one-pass reflection naming the feedback it was given."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        feedback = between(first_user_prompt(messages), "<feedback>", "</feedback>").strip()
        analysis = {
            "reasoning": f"feedback: {feedback}",
            "error_identification": "e",
            "root_cause_analysis": "r",
            "correct_approach": "c",
            "key_insight": f"follow the feedback: {feedback}",
        }
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, analysis)])

    return FunctionModel(respond, model_name="test-reflector")


_INJECTED = re.compile(r"^- \[((?:context|harness)-\d+)\]", re.M)


def shout_skill_manager() -> FunctionModel:
    """The skill manager described in the module docstring: tag, search, add when nothing was found
    (a wrong "Say" answer only), finalize."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = first_user_prompt(messages)
        correct = between(prompt, "<outcome>", "</outcome>").strip().startswith("Correct")
        returns = tool_returns(messages)
        if not returns:
            injected = _INJECTED.findall(between(prompt, "<injected_skills>", "</injected_skills>"))
            calls = [
                ToolCallPart("tag_skill", {"skill_id": skill_id, "delta": 1 if correct else -1})
                for skill_id in injected
            ]
            return ModelResponse(parts=[*calls, ToolCallPart("search_skills", {"query": SHOUT_RULE.issue, "top_k": 1})])
        found = next(part.content for part in returns if part.tool_name == "search_skills")
        added = any(part.tool_name == "add_skill" for part in returns)
        if not added and not correct and "question: Say" in prompt and not isinstance(found, list):
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        "add_skill",
                        {
                            "section": "context",
                            "issue": SHOUT_RULE.issue,
                            "keywords": list(SHOUT_RULE.keywords),
                            "insight": SHOUT_RULE.insight,
                        },
                    )
                ]
            )
        return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "done"})])

    return FunctionModel(respond, model_name="test-skill-manager")
