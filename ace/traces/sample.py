"""`Sample`: one task for the agent, as the loop hands it to an agent and an environment."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["Sample"]


@dataclasses.dataclass(frozen=True)
class Sample:
    """One task for the agent."""

    question: str
    """The task text the agent answers."""
    context: str = ""
    """Extra information given with the question."""
    ground_truth: str | None = None
    """The expected answer, when known (environments may use it to give feedback)."""
    id: str | None = None
    """A stable identifier; it becomes the trace id of the sample's provenance."""
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    """Task data a particular agent or environment needs beyond the text (e.g. a tau2 task and its
    trial); read-only. Nothing in it reaches a prompt unless that agent puts it there."""

    def __post_init__(self) -> None:
        if not isinstance(self.metadata, MappingProxyType):
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
