"""Limits every request to the skills API is held to before any route sees it: the Host names it may
be addressed to (DNS rebinding), and how large, how slow and how many request bodies may be.

`allowed_host_patterns` gives the names Starlette's `TrustedHostMiddleware` accepts (the loopback
names by default: a page of another site that resolves its own name to 127.0.0.1 is refused with
400). `BodyLimits` reads each body before the app does, then replays it:

- over `max_bytes` (declared, or sent in chunks) -> 413, the rest of the body unread;
- not complete within `timeout_s` of the first read -> 408 (a client that stalls mid-body cannot
  pin its bytes in memory);
- when the bodies buffered by all requests at once would exceed `max_buffered_bytes` -> 503 with
  `Retry-After` (150 stalled 8 MiB bodies cannot take 1 GB).

Every refusal closes the connection and drops what was buffered; a body's bytes count against the
shared budget until its request is answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._inputs import MAX_BODY_BYTES, MAX_TASK_CHARS

__all__ = [
    "BODY_TIMEOUT_S",
    "LOOPBACK_HOSTS",
    "MAX_BUFFERED_BODY_BYTES",
    "BodyBudget",
    "BodyLimits",
    "allowed_host_patterns",
]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""The Host names (without port) the API answers by default: this machine's loopback names."""

BODY_TIMEOUT_S = 30.0
"""Seconds a request body may take to arrive, from the first read (8 MiB at 2.2 Mbit/s)."""

MAX_BUFFERED_BODY_BYTES = 64 * 2**20
"""Bytes of request bodies held in memory at once across all requests (8 bodies at the 8 MiB limit)."""

_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", "[::]", ""})


def allowed_host_patterns(extra: Iterable[str] = (), *, bound: str | None = None) -> list[str]:
    """The Host patterns to accept: the loopback names, the address the server is bound to (unless a
    wildcard such as 0.0.0.0), and `extra` (names, `*.example.com` patterns, or `*` for any; an
    IPv6 address is written with brackets, e.g. `[fe80::1]`)."""
    patterns: list[str] = list(LOOPBACK_HOSTS)
    if bound is not None and bound not in _WILDCARD_BINDS:
        patterns.append(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    patterns += [name.strip().lower() for name in extra]
    return list(dict.fromkeys(name.lower() for name in patterns if name))


@dataclass(slots=True)
class BodyBudget:
    """The request-body bytes an app holds at once (`create_app` keeps it as `app.state.body_budget`).
    Counted on the server's event loop only, so it needs no lock."""

    limit: int = MAX_BUFFERED_BODY_BYTES
    """Most bytes held at once; a body that would go over is answered 503."""
    held: int = 0
    """Bytes of bodies held now, by all requests being read or answered."""


class BodyLimits:
    """ASGI middleware holding request bodies to a size, a deadline and a shared memory budget (see
    the module)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int = MAX_BODY_BYTES,
        timeout_s: float = BODY_TIMEOUT_S,
        budget: BodyBudget | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.budget = budget if budget is not None else BodyBudget()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _refuse(scope, receive, send, 413, self._too_large(f"{int(declared):,} bytes declared"))
            return
        # Read the body here, then replay it: FastAPI would read it whole first, without a deadline.
        messages: list[Message] = []
        held = 0
        refusal: tuple[int, str] | None = None
        try:
            async with asyncio.timeout(self.timeout_s):
                while True:
                    message = await receive()
                    messages.append(message)
                    if message["type"] != "http.request":
                        break
                    size = len(message.get("body", b""))
                    if held + size > self.max_bytes:
                        refusal = (413, self._too_large(f"more than {self.max_bytes:,} bytes sent"))
                        break
                    if self.budget.held + size > self.budget.limit:
                        refusal = (
                            503,
                            f"the server holds {self.budget.limit:,} bytes of request bodies already; "
                            "retry in a few seconds",
                        )
                        break
                    self.budget.held += size
                    held += size
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            refusal = (
                408,
                f"the request body did not arrive within {self.timeout_s:g} s ({held:,} bytes "
                "received); send it in one go",
            )
        if refusal is not None:
            messages.clear()  # released before answering: the client may retry the moment it reads the answer
            self.budget.held -= held
            await _refuse(scope, receive, send, *refusal)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        try:
            await self.app(scope, replay, send)
        finally:
            self.budget.held -= held

    def _too_large(self, what: str) -> str:
        return (
            f"request body too large ({what}); the limit is {self.max_bytes:,} bytes and a task "
            f"at most {MAX_TASK_CHARS:,} characters"
        )


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    headers = {"Connection": "close", **({"Retry-After": "5"} if status == 503 else {})}
    await JSONResponse({"detail": detail}, status_code=status, headers=headers)(scope, receive, send)
