"""`BenchItem`: one task of a learning benchmark, its expected answer and how an answer is graded.

Grading is a match against `expected`, never a judgment by a model:

- `normalised` (the default): both texts are compared after Unicode NFKC normalisation and
  case-folding, with every whitespace character removed, one pair of surrounding quotes or
  backticks stripped and a trailing period dropped. So `"Smith, John."` matches `smith,john`,
  and `2500 g` matches `2500g`; `2024.03.05` does not match `2024-03-05`.
- `exact`: the texts must be equal after stripping leading and trailing whitespace.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Literal, get_args

from ace.errors import UsageError

__all__ = ["GRADINGS", "SPLITS", "BenchItem", "Grading", "Split", "normalise_answer"]

Split = Literal["train", "test"]
"""Training items are learned from; test items are what every arm is scored on."""
SPLITS: tuple[Split, ...] = get_args(Split)
"""The splits, in the order they are used."""

Grading = Literal["normalised", "exact"]
"""How an answer is compared with the expected one (see the module docstring)."""
GRADINGS: tuple[Grading, ...] = get_args(Grading)
"""The grading modes; `normalised` is the default."""

_QUOTES = ('"', "'", "`", "\u201c\u201d", "\u2018\u2019")
_WHITESPACE = re.compile(r"\s+")


@dataclasses.dataclass(frozen=True)
class BenchItem:
    """One task: a question, the answer that counts as right, and what it is there to measure.

    Raises UsageError for an empty id, question or expected answer, an unknown split or grading,
    and an item that is both a control and under a rule.
    """

    id: str
    """Unique within the task set; it names the item in reports and becomes its trace id."""
    split: Split
    """`train` (learned from) or `test` (scored)."""
    question: str
    """What the agent is asked."""
    expected: str
    """The answer that counts as right."""
    rule: str | None = None
    """The hidden rule that decides the answer (e.g. `date_format`), when the task set names one."""
    control: bool = False
    """True for an item no rule touches: a skill that changes its answer does harm."""
    grading: Grading = "normalised"
    """How an answer is compared with `expected`."""

    def __post_init__(self) -> None:
        for name in ("id", "question", "expected"):
            if not getattr(self, name).strip():
                raise UsageError(f"{name} must be a non-empty string")
        if self.split not in SPLITS:
            raise UsageError(f"split must be one of {', '.join(SPLITS)}; got {self.split!r}")
        if self.grading not in GRADINGS:
            raise UsageError(f"grading must be one of {', '.join(GRADINGS)}; got {self.grading!r}")
        if self.control and self.rule is not None:
            raise UsageError(
                f"a control item is one no rule touches, but it names rule {self.rule!r}; drop one of them"
            )

    @property
    def kind(self) -> str:
        """What the item measures, for per-kind figures: its rule, `control`, or `other`."""
        return self.rule if self.rule is not None else ("control" if self.control else "other")

    def is_correct(self, answer: str) -> bool:
        """Whether `answer` is right under this item's grading."""
        if self.grading == "exact":
            return answer.strip() == self.expected.strip()
        return normalise_answer(answer) == normalise_answer(self.expected)


def normalise_answer(text: str) -> str:
    """`text` as `normalised` grading compares it (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).strip()
    for quote in _QUOTES:
        opening, closing = quote[0], quote[-1]
        if len(text) >= 2 and text[0] == opening and text[-1] == closing:
            text = text[1:-1].strip()
            break
    text = text.removesuffix(".")
    return _WHITESPACE.sub("", text).casefold()
