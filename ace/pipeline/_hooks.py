"""Observation-only hooks called around every step execution."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ace.pipeline._context import StepContext
from ace.pipeline._step import describe

__all__ = ["StepEvent", "StepHook", "call_hooks", "check_hooks"]

logger = logging.getLogger("ace.pipeline")


@dataclass(frozen=True)
class StepEvent:
    """What a hook sees about one step execution."""

    step: str
    """The step's name."""
    sample_index: int | None
    """Position of the sample in the run's input, or None when a step runs outside a run."""
    context: StepContext
    """The context the step received."""
    output: StepContext | None = None
    """The context the step returned (`after_step` of a successful step only)."""
    error: Exception | None = None
    """The exception the step raised (`after_step` of a failed step only)."""


StepHook = Callable[[StepEvent], None]
"""A `before_step` / `after_step` hook. Called on the event loop thread, so keep it quick; its
return value is ignored and an exception it raises is logged (logger `ace.pipeline`) and ignored."""


def check_hooks(hooks: StepHook | Sequence[StepHook], argument: str) -> tuple[StepHook, ...]:
    """Normalise a hook or sequence of hooks; raise `TypeError` naming a non-callable one."""
    if callable(hooks):
        return (hooks,)
    if not isinstance(hooks, Sequence) or isinstance(hooks, str):
        raise TypeError(f"{argument} must be a callable or a sequence of callables; got {describe(hooks)}")
    for hook in hooks:
        if not callable(hook):
            raise TypeError(f"{argument} contains {describe(hook)}, which is not callable")
    return tuple(hooks)


def call_hooks(hooks: tuple[StepHook, ...], event: StepEvent) -> None:
    """Call each hook with `event`; a hook's exception is logged and never reaches the pipeline."""
    for hook in hooks:
        try:
            hook(event)
        except Exception:
            logger.exception("pipeline hook %r raised on step %r; ignored", hook, event.step)
