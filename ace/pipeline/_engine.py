"""Process-wide resources of the engine: the event loop that serves synchronous callers and the
thread pool that runs synchronous steps.

One loop thread and one pool, created on first use, shared by every pipeline: no thread per
sample and no pool per step class. Synchronous `Pipeline.run` needs a loop that outlives the call,
because background steps keep running after it returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ace.pipeline._errors import PipelineError

__all__ = ["SYNC_STEP_THREADS", "engine_loop", "refuse_running_loop", "run_blocking", "run_in_thread"]

SYNC_STEP_THREADS = 64
"""Threads available to synchronous steps, across all pipelines. More concurrent sync calls than
this queue for a free thread; async steps are not limited by it."""

_T = TypeVar("_T")
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_executor: ThreadPoolExecutor | None = None


def engine_loop() -> asyncio.AbstractEventLoop:
    """The engine's event loop, running forever in a daemon thread started on first call."""
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="ace-pipeline-loop", daemon=True).start()
            _loop = loop
        return _loop


def _sync_step_executor() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(SYNC_STEP_THREADS, thread_name_prefix="ace-pipeline-step")
        return _executor


async def run_in_thread(function: Callable[..., _T], *args: object) -> _T:
    """Run `function(*args)` in the engine's thread pool, carrying the caller's context variables
    (so tracing spans opened inside a sync step nest under the step's span)."""
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_sync_step_executor(), functools.partial(context.run, function, *args))


def refuse_running_loop(method: str, alternative: str) -> None:
    """Raise `PipelineError` if this thread is running an event loop: a blocking call here would
    freeze that loop (and deadlock if the work it waits for runs on it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise PipelineError(
        f"{method}() was called from a running event loop, which it would block; use `await {alternative}(...)` instead"
    )


def run_blocking(coroutine: Coroutine[Any, Any, _T], *, method: str, alternative: str) -> _T:
    """Run `coroutine` on the engine's loop and wait for its result, for synchronous callers.

    The same loop serves every blocking call of the process, so clients bound to a loop (HTTP
    pools, litellm's logging worker) keep working across calls. Raises `PipelineError` (naming
    `method` and the awaitable `alternative`) when called from a running event loop.
    """
    try:
        refuse_running_loop(method, alternative)
    except PipelineError:
        coroutine.close()  # never started: close it so it is not reported as never awaited
        raise
    future = asyncio.run_coroutine_threadsafe(coroutine, engine_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()  # e.g. KeyboardInterrupt: stop the work instead of orphaning it
        raise
