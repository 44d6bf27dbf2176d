"""`TaskSet`: the items a benchmark runs on, the true rules behind them (when known), and what failed to load."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from ace_eval.bench.items import BenchItem, Split

__all__ = ["RuleSkill", "TaskSet"]


@dataclasses.dataclass(frozen=True)
class RuleSkill:
    """A hidden rule written by hand as a skill: what the `oracle` arm injects."""

    issue: str
    """When the rule applies."""
    insight: str
    """What to do, with an example."""
    keywords: tuple[str, ...]
    """Short labels of the rule."""


@dataclasses.dataclass(frozen=True)
class TaskSet:
    """A family's items, split into train and test, with the rules that decide their answers."""

    name: str
    """`conventions` or the task file's path."""
    items: tuple[BenchItem, ...]
    """Every usable item, train and test, in the family's order."""
    rules: Mapping[str, RuleSkill] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    """The true rules by rule id (empty when the family does not state them: no `oracle` arm)."""
    problems: tuple[str, ...] = ()
    """Inputs that could not be used (e.g. malformed task-file lines), one line each."""

    def split(self, split: Split, limit: int | None = None) -> tuple[BenchItem, ...]:
        """The items of `split`, in order; the first `limit` of them when given."""
        chosen = tuple(item for item in self.items if item.split == split)
        return chosen if limit is None else chosen[:limit]
