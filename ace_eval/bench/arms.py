"""The arms of the benchmark: what each one puts in front of the agent on the same test items.

| arm | what the agent gets | the question it answers |
|---|---|---|
| `none` | nothing (an empty skillbook) | how far the model gets alone |
| `learned` | the learned skills the matcher picks for the task | does learning help |
| `all` | every learned skill | is matching worth it |
| `icl` | the training items, answers given and feedback, within a token budget | does a skillbook beat raw experience |
| `oracle` | the task's true rule, written by hand as a skill (none for a control) | can the agent use a rule at all |
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from ace.errors import UsageError
from ace.skillbook import Skillbook
from ace_eval.bench.names import ARMS, LEARNING_ARMS, Arm
from ace_eval.bench.task_set import RuleSkill

__all__ = [
    "ARMS",
    "ARM_QUESTIONS",
    "LEARNING_ARMS",
    "Arm",
    "Experience",
    "IclBlock",
    "count_tokens",
    "icl_block",
    "oracle_skillbook",
]

ARM_QUESTIONS: Mapping[str, str] = {
    "none": "the model alone, nothing injected",
    "learned": "the learned skills the matcher picks for each task",
    "all": "every learned skill in every prompt",
    "icl": "the training experience pasted into the prompt, up to the token budget",
    "oracle": "each task's true rule, written by hand (nothing for a control)",
}
"""One line per arm saying what its agent gets."""

_ICL_HEADER = "Earlier tasks, each with the answer that was given and the feedback it got:"


@dataclasses.dataclass(frozen=True)
class Experience:
    """One training answer and its feedback, as the learning phase recorded them."""

    question: str
    """The training task."""
    answer: str
    """What the agent answered."""
    feedback: str
    """What it was told (with `labels`, the expected answer; with `verdict`, right or wrong only)."""


@dataclasses.dataclass(frozen=True)
class IclBlock:
    """The `icl` arm's context: as many experiences as fit the budget, in training order."""

    text: str
    """What every test prompt of the arm carries ("" when nothing fits)."""
    included: int
    """Experiences in `text`."""
    available: int
    """Experiences there were."""
    tokens: int
    """Tokens of `text` as `count_tokens` counts them; at most the budget."""
    budget: int
    """The token budget."""


def count_tokens(text: str) -> int:
    """Tokens of `text` by litellm's counter (tiktoken's cl100k_base, bundled: no download). It is
    an estimate for other tokenizers; the report's prompt tokens per item are the server's counts."""
    import litellm

    return int(litellm.token_counter(text=text))


def icl_block(
    experiences: Sequence[Experience], budget: int, *, counter: Callable[[str], int] = count_tokens
) -> IclBlock:
    """The experiences, in order, under a header, stopping before the first that would take the
    block past `budget` tokens. Raises UsageError for a budget below 1."""
    if budget < 1:
        raise UsageError(f"the icl token budget must be at least 1, got {budget}")
    parts = [_ICL_HEADER]
    text, included = "", 0
    for experience in experiences:
        candidate = "\n\n".join([*parts, _render(experience)])
        if counter(candidate) > budget:
            break
        parts.append(_render(experience))
        text, included = candidate, included + 1
    return IclBlock(
        text=text, included=included, available=len(experiences), tokens=counter(text) if text else 0, budget=budget
    )


def oracle_skillbook(rule: str, rules: Mapping[str, RuleSkill]) -> Skillbook:
    """A skillbook holding only `rule`'s hand-written skill. Raises KeyError for an unknown rule."""
    skill = rules[rule]
    skillbook = Skillbook()
    skillbook.add_skill("context", skill.issue, list(skill.keywords), skill.insight)
    return skillbook


def _render(experience: Experience) -> str:
    return f"Task: {experience.question}\nAnswer given: {experience.answer}\nFeedback: {experience.feedback}"
