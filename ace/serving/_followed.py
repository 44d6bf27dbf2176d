"""The skillbook as every front door serves it: loaded from its store, followed while it changes
(a file reloaded when it changes on disk, a database through LISTEN/NOTIFY), matched with one
`SkillMatcher` refreshed incrementally, and its catalog kept as bytes."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

from ace import tracing
from ace.retrieval.embedder import EmbeddingError
from ace.retrieval.matching import SkillMatcher
from ace.skillbook import Skillbook
from ace.skillbook.storage import SkillbookFollower, open_store
from ace.untrusted import short_line

__all__ = ["FollowedSkillbook", "ServedSkillbook", "catalog_json", "closing_lifespan", "follow"]

logger = logging.getLogger("ace.server")


@dataclass(frozen=True, slots=True)
class ServedSkillbook:
    """One served state: the skillbook with the catalog made from it when it last changed."""

    skillbook: Skillbook
    """The skillbook served (one object for the server's life, kept up to date in place)."""
    catalog: bytes
    """The JSON of `GET /memory/skills`: the active skills' id, section, keywords and issue."""


class FollowedSkillbook(Protocol):
    """A skillbook followed for serving: what `ace serve`, its UI and `ace mcp` read."""

    matcher: SkillMatcher
    """The one matcher of the server's life, refreshed after every change."""

    @property
    def display(self) -> str:
        """The location for messages and pages: a URL's secrets hidden."""
        ...

    @property
    def stale(self) -> str | None:
        """Why what is served may be behind the store (a reload or an index refresh failed), in
        one short line; None when it is not."""
        ...

    def current(self) -> ServedSkillbook:
        """The state to answer from now (a changed file is reloaded first)."""
        ...

    def close(self) -> None:
        """Stop following (a database follower's thread and connection); call it on shutdown."""
        ...


def closing_lifespan(followed: FollowedSkillbook) -> Callable[[object], AbstractAsyncContextManager[None]]:
    """A lifespan for the server serving `followed` (FastAPI's and FastMCP's take one): when the
    server stops, it stops following the skillbook (a database follower's thread and connection)."""

    @asynccontextmanager
    async def lifespan(server: object) -> AsyncIterator[None]:
        try:
            yield
        finally:
            followed.close()

    return lifespan


def catalog_json(skillbook: Skillbook) -> bytes:
    """The full catalog of active skills, in skillbook order, as compact UTF-8 JSON."""
    catalog = [
        {"id": s.id, "section": s.section, "keywords": list(s.keywords), "issue": s.issue} for s in skillbook.skills()
    ]
    return json.dumps(catalog, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def follow(location: str | os.PathLike[str], matcher_factory: Callable[[Skillbook], SkillMatcher]) -> FollowedSkillbook:
    """Load the skillbook at `location` (a file or a `postgresql://` URL), build its match index,
    and follow it. `matcher_factory(skillbook)` makes the one matcher used for the server's life.

    Raises what loading raises: `OSError` (e.g. `FileNotFoundError`), `SkillbookFormatError` for
    malformed content, `SkillbookStorageError` when the database cannot be reached."""
    return _Followed(location, matcher_factory)


class _Followed:
    """A `FollowedSkillbook` over any store. Requests never wait for the database (its follower's
    thread applies changes); a changed file is reloaded by the request that notices it. A change
    whose new texts cannot be embedded is still served, with `stale` saying so, and the index is
    refreshed again on the next request."""

    def __init__(self, location: str | os.PathLike[str], matcher_factory: Callable[[Skillbook], SkillMatcher]) -> None:
        store = open_store(location)
        self.display = store.display
        skillbook = Skillbook()
        self._follower: SkillbookFollower = store.follow(skillbook, on_change=self._changed)
        self.matcher: SkillMatcher = matcher_factory(skillbook)
        self.matcher.refresh()
        self._state = ServedSkillbook(skillbook, catalog_json(skillbook))
        self._index_error: str | None = None
        self._refresh_lock = threading.Lock()
        self._follower.start()

    @property
    def stale(self) -> str | None:
        return self._follower.stale or self._index_error

    def current(self) -> ServedSkillbook:
        self._follower.poll()
        if self._index_error is not None:
            self._changed()
        return self._state

    def close(self) -> None:
        self._follower.close()

    def _changed(self) -> None:
        skillbook = self._state.skillbook
        with (
            self._refresh_lock,
            tracing.span("skills_api.reload", path=self.display, version=skillbook.version) as span,
        ):
            try:
                self.matcher.refresh()
                self._index_error = None
            except EmbeddingError as error:
                # The skills are served; their new texts are embedded on the next request or change.
                span.record_exception(error, escaped=False)
                self._index_error = f"{type(error).__name__}: {short_line(str(error))}"
                logger.warning("skillbook %s: new skills could not be indexed (%s)", self.display, self._index_error)
            self._state = ServedSkillbook(skillbook, catalog_json(skillbook))
