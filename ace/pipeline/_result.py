"""The one result every input sample gets."""

from __future__ import annotations

from dataclasses import dataclass

from ace.pipeline._context import StepContext

__all__ = ["SampleResult"]


@dataclass(eq=False)
class SampleResult:
    """The outcome of one input context; `Pipeline.run` returns one per input, in input order.

    While `pending` is True the sample's background steps are still running and `output`,
    `error` and `failed_at` may still change; `wait_for_background` returns once they are final.
    """

    sample: StepContext
    """The input context, as given to `run`."""
    output: StepContext | None = None
    """The context after the last step, or None if the sample failed or is pending."""
    error: Exception | None = None
    """The exception that stopped the sample, or None."""
    failed_at: str | None = None
    """Name of the step that raised `error` (the innermost one, for nested pipelines), or None."""
    pending: bool = False
    """True while the sample's background steps (from the async boundary on) are still running."""

    @property
    def ok(self) -> bool:
        """Whether the sample finished every step without error."""
        return not self.pending and self.error is None
