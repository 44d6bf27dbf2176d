"""Worked examples: the task a lesson was learned from and its expected answer, quoted in the lesson.

A small model states a rule badly and an example well, so `SkillManager(worked_examples=True)`
ends a context insight with `Example: '<task>' -> '<expected answer>'`. The same example makes a
recheck on that task vacuous (the agent can copy the answer), so `Recheck` hands the skills out
with it withheld (`without_example`): the insight alone must carry the rule.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["WorkedExample", "with_example", "without_example", "worked_example"]

_TASK_CHARS = 300
"""How much of the task a worked example quotes."""


class WorkedExample(NamedTuple):
    """A task's expected answer and the example text that quotes the task and the answer."""

    answer: str
    text: str


def worked_example(question: str | None, ground_truth: str | None) -> WorkedExample | None:
    """The worked example of `question` with `ground_truth` (the task quoted up to 300 characters,
    whitespace collapsed), or None unless both are given and not blank."""
    if not question or not question.strip() or ground_truth is None or not ground_truth.strip():
        return None
    task = " ".join(question.split())
    task = task if len(task) <= _TASK_CHARS else task[:_TASK_CHARS] + "..."
    return WorkedExample(ground_truth, f"Example: {task!r} -> {ground_truth!r}")


def with_example(insight: str, example: WorkedExample) -> str:
    """`insight` ending with `example`, unless it already quotes the expected answer."""
    return insight if example.answer in insight else f"{insight.rstrip()} {example.text}"


def without_example(insight: str, example: WorkedExample) -> str:
    """`insight` with every copy of `example`'s text cut out (surrounding blanks tidied)."""
    return " ".join(part.strip() for part in insight.split(example.text) if part.strip())
