"""`Branch`: run several steps or pipelines concurrently on the same context, then merge."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ace.pipeline._context import StepContext
from ace.pipeline._errors import BranchConflictError, BranchError, PipelineCancelled, PipelineConfigError
from ace.pipeline._execution import execute_step
from ace.pipeline._pipeline import Pipeline
from ace.pipeline._step import Step, StepSpec, describe, inspect_step

__all__ = ["Branch", "MergeFunction", "MergeStrategy"]

MergeStrategy = Literal["raise_on_conflict", "last_write_wins"]
"""Built-in merges. Both apply each child's changes (fields whose value differs from the input's)
to the input context. `raise_on_conflict` raises `BranchConflictError` when two children set a
field to different values; `last_write_wins` keeps the value of the later child."""

MergeFunction = Callable[[StepContext, Sequence[StepContext]], StepContext]
"""A custom merge: `(input context, child outputs in child order) -> merged context`."""

_BUILT_IN_MERGES = ("raise_on_conflict", "last_write_wins")


class Branch:
    """A step that runs its children concurrently on the same input context (fork/join).

    Every child runs to completion even if another fails; failures are raised together as one
    `BranchError` listing each (a cancelled run raises `PipelineCancelled` instead, noting the
    other children's failures). Children cannot contain an async boundary. `requires`/`provides`
    are the unions of the children's.
    """

    def __init__(
        self,
        *children: Step[Any],
        merge: MergeStrategy | MergeFunction = "raise_on_conflict",
        name: str = "Branch",
    ) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Branch name must be a non-empty str; got {describe(name)}")
        if not children:
            raise PipelineConfigError(f"Branch {name!r} has no children; give it at least one step or pipeline")
        if not callable(merge) and merge not in _BUILT_IN_MERGES:
            raise PipelineConfigError(
                f"Branch {name!r} got merge={merge!r}; expected 'raise_on_conflict', "
                "'last_write_wins' or a callable (input, outputs) -> context"
            )
        specs = [inspect_step(child, f"child {i} of Branch {name!r}") for i, child in enumerate(children)]
        for spec in specs:
            inner = spec.step.boundary_step if isinstance(spec.step, Pipeline) else None
            if spec.async_boundary or inner is not None:
                raise PipelineConfigError(
                    f"child {spec.name!r} of Branch {name!r} has an async boundary "
                    f"({inner or spec.name!r}); branch children always run in full, so put the "
                    "boundary in the outermost pipeline, after the branch"
                )
        self.name = name
        """The branch's name (in spans, hooks and `failed_at`)."""
        self.requires: frozenset[str] = frozenset().union(*(spec.requires for spec in specs))
        """Union of the children's `requires`."""
        self.provides: frozenset[str] = frozenset().union(*(spec.provides for spec in specs))
        """Union of the children's `provides`."""
        self._children: tuple[StepSpec, ...] = tuple(specs)
        self._merge = merge

    @property
    def children(self) -> tuple[Step[Any], ...]:
        """The child steps, in order."""
        return tuple(spec.step for spec in self._children)

    def __repr__(self) -> str:
        return f"Branch({self.name!r}: {' | '.join(spec.name for spec in self._children)})"

    async def __call__(self, ctx: StepContext) -> StepContext:
        """Run every child on `ctx` concurrently and return the merged context.

        Raises `BranchError` if any child failed, `BranchConflictError` on a merge conflict.
        """
        outcomes = await asyncio.gather(*(execute_step(spec, ctx) for spec in self._children), return_exceptions=True)
        failures: list[tuple[str, Exception]] = []
        named: list[tuple[str, StepContext]] = []
        for spec, outcome in zip(self._children, outcomes):
            if isinstance(outcome, Exception):
                failures.append((spec.name, outcome))
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                named.append((spec.name, outcome))
        cancelled = next((error for _, error in failures if isinstance(error, PipelineCancelled)), None)
        if cancelled is not None:
            # The sample ends as cancelled; the other children's real failures stay visible on it.
            for child, error in failures:
                if not isinstance(error, PipelineCancelled):
                    cancelled.add_note(f"branch child {child!r} also failed: {type(error).__name__}: {error}")
            raise cancelled
        if failures:
            raise BranchError(failures)
        if callable(self._merge):
            return self._merge(ctx, [output for _, output in named])
        return _apply_changes(ctx, named, raise_on_conflict=self._merge == "raise_on_conflict")


def _apply_changes(
    base: StepContext, outputs: list[tuple[str, StepContext]], *, raise_on_conflict: bool
) -> StepContext:
    changes: dict[str, Any] = {}
    writers: dict[str, list[str]] = {}
    conflicting: set[str] = set()
    for child, output in outputs:
        for field in dataclasses.fields(output):
            value = getattr(output, field.name)
            if _same(value, getattr(base, field.name, None)):
                continue
            if field.name in changes and not _same(changes[field.name], value):
                conflicting.add(field.name)
            changes[field.name] = value
            writers.setdefault(field.name, []).append(child)
    if raise_on_conflict and conflicting:
        raise BranchConflictError({name: writers[name] for name in sorted(conflicting)})
    return base.replace(**changes)


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # e.g. numpy arrays: no single truth value, so treat as different
        return False
