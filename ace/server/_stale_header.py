"""`StaleStateHeader`: the `X-Skillbook-Stale` header on every answer given while the served state
is behind its store, as plain ASGI middleware (Starlette's `BaseHTTPMiddleware` costs a task and a
stream per request: a tenth of a cached match's CPU)."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ace.serving import FollowedSkillbook

__all__ = ["STALE_HEADER", "MAX_STALE_HEADER_CHARS", "StaleStateHeader"]

STALE_HEADER = "X-Skillbook-Stale"
"""Response header present when the served state is not the file on disk (its reload failed); it
says why."""

MAX_STALE_HEADER_CHARS = 300
"""Characters of the reason the header keeps."""


class StaleStateHeader:
    """Adds `STALE_HEADER` to each HTTP answer when `followed.stale` says why the state served is
    behind the store (checked as the answer starts, after the request's own reload attempt)."""

    def __init__(self, app: ASGIApp, followed: FollowedSkillbook) -> None:
        self.app = app
        self.followed = followed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                stale = self.followed.stale
                if stale is not None:
                    # Clients must be able to tell that they get the last good state, not the store as it is.
                    reason = stale.encode("ascii", "backslashreplace").decode("ascii").replace("\n", " ")
                    MutableHeaders(scope=message)[STALE_HEADER] = reason[:MAX_STALE_HEADER_CHARS]
            await send(message)

        await self.app(scope, receive, send_marked)
