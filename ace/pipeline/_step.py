"""The step contract and its validation: what the engine accepts as a step, checked once at build."""

from __future__ import annotations

import asyncio
import inspect
import reprlib
import weakref
from collections.abc import Awaitable, Set
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ace.pipeline._context import StepContext
from ace.pipeline._errors import PipelineConfigError

__all__ = ["Step", "StepSpec", "describe", "inspect_step"]


ContextT = TypeVar("ContextT", bound=StepContext, contravariant=True)


class Step(Protocol[ContextT]):
    """Any object with these attributes and a call is a step; no base class is needed.

    `Step[C]` takes contexts of type `C` (a `StepContext` subclass); a pipeline holds `Step[Any]`.

    `__call__(ctx)` may be a plain method (run in a worker thread) or `async def` (awaited on the
    engine's event loop); it returns a new context, usually `ctx.replace(...)`. Optional
    attributes: `name: str` (default: the class name), `async_boundary: bool` (this step and all
    after it run in the background), `max_workers: int` (at most this many calls of the step at
    once, across all samples and runs of the pipeline on one event loop).
    """

    requires: frozenset[str]
    """Context fields the step reads; an earlier step or the input must provide them."""
    provides: frozenset[str]
    """Context fields the step writes."""

    def __call__(self, ctx: ContextT, /) -> StepContext | Awaitable[StepContext]: ...


def describe(obj: object) -> str:
    """A short, bounded description of `obj` for error messages."""
    return f"{type(obj).__name__} {reprlib.repr(obj)}"


@dataclass(eq=False)
class StepSpec:
    """A validated step plus what the engine needs to run it (read once, at construction)."""

    step: Step[Any]
    """The step object itself."""
    name: str
    """The step's `name`, or its class name."""
    requires: frozenset[str]
    """Copy of the step's `requires`."""
    provides: frozenset[str]
    """Copy of the step's `provides`."""
    is_async: bool
    """Whether calling the step returns an awaitable (`async def __call__`)."""
    async_boundary: bool
    """Whether the step starts the background part of its pipeline."""
    max_workers: int | None
    """Bound on concurrent calls of this step, or None for no bound."""
    _semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = field(
        default_factory=weakref.WeakKeyDictionary, repr=False
    )

    def limiter(self) -> asyncio.Semaphore | None:
        """The running loop's semaphore enforcing `max_workers` (one per loop, since an asyncio
        semaphore binds to the loop it is first contended on), or None when unbounded."""
        if self.max_workers is None:
            return None
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.max_workers)
        return semaphore


def inspect_step(step: object, where: str) -> StepSpec:
    """Validate `step` against the contract and return its spec.

    `where` says where the step sits (e.g. "step 2 of Pipeline 'learn'") for the error message.
    Raises `PipelineConfigError` naming the object and the broken part of the contract.
    """

    def fail(problem: str) -> PipelineConfigError:
        return PipelineConfigError(f"{where} ({describe(step)}) {problem}")

    fields = {}
    for attr in ("requires", "provides"):
        value = getattr(step, attr, None)
        if value is None:
            raise fail(f"has no `{attr}` attribute; a step needs `requires` and `provides` (frozenset[str])")
        if not isinstance(value, Set) or not all(isinstance(item, str) for item in value):
            raise fail(f"has `{attr}` = {value!r}; expected a frozenset of context field names")
        fields[attr] = frozenset(value)
    if not callable(step):
        raise fail("is not callable; a step needs `__call__(ctx) -> ctx`")
    name = getattr(step, "name", None)
    if name is None:
        name = type(step).__name__
    elif not isinstance(name, str) or not name:
        raise fail(f"has `name` = {name!r}; expected a non-empty str")
    boundary = getattr(step, "async_boundary", False)
    if not isinstance(boundary, bool):
        raise fail(f"has `async_boundary` = {boundary!r}; expected a bool")
    max_workers = getattr(step, "max_workers", None)
    if max_workers is not None and (
        isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
    ):
        raise fail(f"has `max_workers` = {max_workers!r}; expected an int >= 1 or None")
    is_async = inspect.iscoroutinefunction(step) or (callable(step) and inspect.iscoroutinefunction(step.__call__))
    return StepSpec(
        step=step,  # type: ignore[arg-type]
        name=name,
        requires=fields["requires"],
        provides=fields["provides"],
        is_async=is_async,
        async_boundary=boundary,
        max_workers=max_workers,
    )
