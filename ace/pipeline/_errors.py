"""The engine's error types. Every error the engine raises on purpose is a `PipelineError`."""

from __future__ import annotations

from ace.errors import AceError, UsageError

__all__ = [
    "BranchConflictError",
    "BranchError",
    "PipelineCancelled",
    "PipelineConfigError",
    "PipelineError",
    "PipelineOrderError",
]


class PipelineError(AceError):
    """Base class of every error raised by `ace.pipeline`."""


class PipelineConfigError(PipelineError, UsageError):
    """A pipeline, branch or run was configured wrongly: an object that is not a step, two async
    boundaries, a context type lacking a field the steps name, a bad `workers` value.

    Raised at construction (or at the start of a run); fix the wiring named in the message. A
    `UsageError` (and so a `ValueError`) as well.
    """


class PipelineOrderError(PipelineConfigError):
    """A step requires a context field that only a *later* step provides.

    Raised at construction; the message names the step, the field and the provider. Move the
    provider before the step that needs it.
    """


class PipelineCancelled(PipelineError):
    """Recorded as a sample's `error` when its run's `CancellationToken` was cancelled before a
    step started. `SampleResult.failed_at` names the step that did not run."""


class BranchError(PipelineError):
    """One or more children of a `Branch` failed. Every child ran to completion first.

    `failures` lists `(child name, exception)` for each failed child, in child order.
    """

    def __init__(self, failures: list[tuple[str, Exception]]) -> None:
        self.failures: tuple[tuple[str, Exception], ...] = tuple(failures)
        details = "; ".join(f"{name}: {type(exc).__name__}: {exc}" for name, exc in self.failures)
        super().__init__(f"{len(self.failures)} branch child(ren) failed — {details}")


class BranchConflictError(BranchError):
    """Children of a `Branch` set the same context field to different values while the merge
    strategy is `"raise_on_conflict"`. Make the children write disjoint fields, or pass
    `merge="last_write_wins"` or a merge function.

    `conflicts` maps each conflicting field to the names of the children that wrote it.
    """

    def __init__(self, conflicts: dict[str, list[str]]) -> None:
        self.failures = ()
        self.conflicts: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in conflicts.items()}
        details = "; ".join(f"{field!r} written by {', '.join(names)}" for field, names in conflicts.items())
        Exception.__init__(
            self,
            f"branch children wrote different values to the same field — {details}; write disjoint "
            "fields or pass merge='last_write_wins' or a merge function",
        )
