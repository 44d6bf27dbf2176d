"""Budgets and limits of a RecursiveAgent session, and the error raised when one runs out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic_ai.usage import RunUsage

from ace.errors import AceError, UsageError

__all__ = ["AgenticConfig", "BudgetExhausted"]


@dataclass(frozen=True)
class AgenticConfig:
    """Limits of one RecursiveAgent session (a root run plus every child it spawns).

    Raises `ValueError` naming the field when a value is out of range.
    """

    max_requests: int = 30
    """Model requests per session, children and compaction summaries included. `1` means a single
    tool-call pass: the one response's tool calls are executed, then the run ends (see `RecursiveRun`)."""
    max_tokens: int | None = None
    """Total (input + output) tokens per session, children and summaries included; None for no cap."""
    context_budget_tokens: int | Literal["auto"] | None = "auto"
    """Estimated history size (about 4 characters per token) above which compaction runs; "auto"
    (the default) derives it from the model's context window (half of it, minus the output cap:
    the estimate counts 4 characters a token and leaves out instructions and tools);
    None disables compaction."""
    context_window_tokens: int | None = None
    """The model's context window in tokens; None: litellm's model information, else
    `ace.models.DEFAULT_CONTEXT_WINDOW` (8192; set it for a local server's model)."""
    keep_recent_messages: int = 6
    """How many of the latest messages compaction never touches; at least 1, because the latest
    message is the request about to be sent (with the tool results the model has not seen yet)."""
    child_budget_fraction: float = 0.5
    """Share of the parent's remaining requests (and tokens) a `recurse` child may use, in (0, 1]."""
    tool_retries: int = 2
    """How many `ModelRetry` corrections in a row one tool may send back before the session ends
    (pydantic-ai's `UnexpectedModelBehavior`); a successful call of the tool resets the count."""
    max_depth: int = 0
    """How deep `recurse` may nest; 0 (the default) offers no `recurse` tool, so a role has exactly
    the tools it registers."""

    def compaction_budget(self, *, context_window: int, max_output_tokens: int | None) -> int | None:
        """The history budget compaction keeps to: the configured one, or for "auto" half of
        `context_window` (this config's `context_window_tokens` when set) minus the output cap."""
        if self.context_budget_tokens != "auto":
            return self.context_budget_tokens
        window = self.context_window_tokens or context_window
        return max(256, int(window * 0.5) - (max_output_tokens or 0))

    def __post_init__(self) -> None:
        if self.max_requests < 1:
            raise UsageError(f"max_requests must be >= 1, got {self.max_requests}")
        for name in ("max_tokens", "context_window_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UsageError(f"{name} must be None or >= 1, got {value}")
        budget = self.context_budget_tokens
        if budget != "auto" and budget is not None and (isinstance(budget, str) or budget < 1):
            raise UsageError(f'context_budget_tokens must be "auto", None or >= 1, got {budget!r}')
        if self.keep_recent_messages < 1:
            raise UsageError(f"keep_recent_messages must be >= 1, got {self.keep_recent_messages}")
        if not 0 < self.child_budget_fraction <= 1:
            raise UsageError(f"child_budget_fraction must be in (0, 1], got {self.child_budget_fraction}")
        if self.tool_retries < 0:
            raise UsageError(f"tool_retries must be >= 0, got {self.tool_retries}")
        if self.max_depth < 0:
            raise UsageError(f"max_depth must be >= 0, got {self.max_depth}")


class BudgetExhausted(AceError):
    """A session ran out of its request or token budget before the model produced its output.

    `usage` is the session's usage when it stopped (children included); `limit` says which budget ran
    out and `cap` is its value. Raise the budget in `AgenticConfig` or shorten the task.
    """

    def __init__(self, *, usage: RunUsage, limit: Literal["requests", "tokens"], cap: int) -> None:
        used = usage.requests if limit == "requests" else usage.total_tokens
        super().__init__(f"session budget exhausted: {limit} cap {cap} reached ({used} used)")
        self.usage = usage
        self.limit = limit
        self.cap = cap
