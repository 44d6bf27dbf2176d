"""What the roles' code tools share: the default sandbox, a sandbox started on first use, and how
one execution is reported to the model (the RR's `execute_code`, the SkillManager's `sandbox_eval`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from ace.agentic.sandbox import DEFAULT_MAX_OUTPUT_CHARS, ExecutionResult, Sandbox

__all__ = ["LazySandbox", "default_sandbox", "format_execution"]


def default_sandbox(context_window: int) -> Sandbox:
    """A `Sandbox` whose output per execution is cut at `context_window` characters (about a
    quarter of the window in tokens, at 4 characters a token) and at most `DEFAULT_MAX_OUTPUT_CHARS`."""
    return Sandbox(max_output_chars=min(DEFAULT_MAX_OUTPUT_CHARS, context_window))


class LazySandbox:
    """A sandbox made by `factory` and started with the data of `variables()` at the first
    `execute`, so a session that never runs code never starts a worker. `close()` stops it. Calls
    are serialised: tool calls of one response run concurrently, and must not start two workers."""

    def __init__(self, factory: Callable[[], Sandbox], variables: Callable[[], Mapping[str, Any]]) -> None:
        self._factory = factory
        self._variables = variables
        self._sandbox: Sandbox | None = None
        self._lock = asyncio.Lock()

    @property
    def started(self) -> bool:
        """True once a worker was started (and not closed)."""
        return self._sandbox is not None

    async def execute(self, code: str) -> ExecutionResult:
        """Run `code`; start-up errors (`SandboxError`) propagate."""
        async with self._lock:
            if self._sandbox is None:
                sandbox = self._factory()
                try:
                    # Starting the worker process blocks; keep the event loop free meanwhile.
                    await asyncio.to_thread(sandbox.start, self._variables())
                except BaseException:
                    sandbox.close()
                    raise
                self._sandbox = sandbox
            return await asyncio.to_thread(self._sandbox.execute, code)

    def close(self) -> None:
        """Stop the worker, if one was started."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None


def format_execution(result: ExecutionResult, *, reloaded: str) -> str:
    """One execution as the model reads it: stdout, stderr, the error, and a line for each limit
    that stopped the code; `reloaded` names what a restarted sandbox reloads."""
    parts = []
    if result.stdout:
        parts.append(f"stdout:\n{result.stdout}")
    if result.stderr:
        parts.append(f"stderr:\n{result.stderr}")
    if result.error:
        parts.append(f"error:\n{result.error}")
    if result.timed_out:
        parts.append("The code was stopped: it exceeded the time limit.")
    if result.memory_exceeded:
        parts.append("The code was stopped: it exceeded the memory limit.")
    if result.state_lost:
        parts.append(f"The sandbox restarted: variables you defined are gone ({reloaded} are reloaded).")
    if result.truncated:
        parts.append("(output truncated: print less at a time)")
    return "\n".join(parts) or "(no output: use print() to see values)"
