"""The immutable per-sample context that flows through a pipeline, and a run's cancellation token."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Self

__all__ = ["CancellationToken", "StepContext"]


@dataclasses.dataclass(frozen=True)
class StepContext:
    """What one sample carries through the steps. Frozen: steps return `ctx.replace(...)`.

    Subclass it (as a frozen dataclass) to add fields; steps name those fields in their
    `requires`/`provides`. A `metadata` mapping that is not already a `MappingProxyType` is copied
    and stored read-only, so the caller's dict can change without affecting the context.
    """

    sample: Any
    """The input this context was made for (a task, a question, a trace...)."""
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    """Free-form, read-only information about the sample or run (ids, epoch labels...)."""

    def __post_init__(self) -> None:
        if isinstance(self.metadata, MappingProxyType):
            return
        if not isinstance(self.metadata, Mapping):
            raise TypeError(
                f"{type(self).__name__}.metadata must be a mapping; got {type(self.metadata).__name__} "
                f"{self.metadata!r}"
            )
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def span_attributes(self) -> Mapping[str, Any]:
        """Attributes given to the span of every step run on this context and to every span opened
        inside it (see `ace.tracing.span_attributes`). None here; subclasses name their sample."""
        return {}

    def replace(self, **changes: Any) -> Self:
        """Return a copy with `changes` applied; raises `TypeError` for a field that does not exist."""
        return dataclasses.replace(self, **changes)


class CancellationToken:
    """Cooperative cancellation for a run: the engine checks it before every step.

    Thread-safe; cancel from any thread. Samples that reach a step after `cancel()` end with a
    `PipelineCancelled` error; a step already running is not interrupted.
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        """Ask every run using this token to stop before its next step."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` has been called."""
        return self._event.is_set()
