"""`WatchedSkillbook`: the skillbook file as served, reloaded when the file changes on disk;
`PgWatchedSkillbook`: a PostgreSQL skillbook as served, following other writers through LISTEN/NOTIFY."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


from ace import tracing
from ace.retrieval.embedder import EmbeddingError
from ace.retrieval.matching import SkillMatcher
from ace.skillbook import Skillbook, SkillbookError
from ace.skillbook._store import is_database_url
from ace.untrusted import MAX_QUOTE_CHARS

__all__ = ["PgWatchedSkillbook", "ServedSkillbook", "WatchedSkillbook", "watch"]

_Signature = tuple[int, int, int]
logger = logging.getLogger("ace.server")


@dataclass(frozen=True, slots=True)
class ServedSkillbook:
    """One loaded state of the file; replaced whole on reload, so a request sees one consistent state."""

    skillbook: Skillbook
    """The skillbook as loaded."""
    catalog: bytes
    """The JSON of `GET /memory/skills`: the active skills' id, section, keywords and issue."""
    signature: _Signature
    """(mtime_ns, size, inode) of the file this state was loaded from; (version, 0, 0) for a database."""


def catalog_json(skillbook: Skillbook) -> bytes:
    """The full catalog of active skills, in skillbook order, as compact UTF-8 JSON."""
    catalog = [
        {"id": s.id, "section": s.section, "keywords": list(s.keywords), "issue": s.issue}
        for s in skillbook.skills()
    ]
    return json.dumps(catalog, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


_MISSING: _Signature = (-1, -1, -1)


def _signature(path: Path) -> _Signature:
    """(mtime_ns, size, inode) of `path`, or `_MISSING` when it cannot be stat'ed."""
    try:
        stat = os.stat(path)
    except OSError:
        return _MISSING
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def _one_short_line(message: str) -> str:
    """The start of `message` (where a load error names the file, skill and field) as one ASCII line
    of about `MAX_QUOTE_CHARS` characters: the bad value it quotes may be 100 KB of newlines."""
    cut = message[:MAX_QUOTE_CHARS] + ("..." if len(message) > MAX_QUOTE_CHARS else "")
    return cut.encode("unicode_escape").decode("ascii")


class WatchedSkillbook:
    """Serves a skillbook file and follows it: each `current()` stats the file (one syscall) and,
    when its mtime, size or inode changed, loads it and rebinds the matcher (only new or edited
    skill texts are embedded).

    Saves are atomic renames, so a load never sees a half-written file. If a changed file cannot be
    loaded anyway (`OSError`: deleted, unreadable; `SkillbookError`: hand-edited into invalid JSON or
    a malformed skill), or its new skills cannot be embedded (`EmbeddingError`), the last good state
    keeps being served, a warning naming the error is logged (logger `ace.server`; the reload span
    records it too), `stale` says why in one short line, and that file state is not retried until
    the file changes again (a file that loaded but could not be indexed because the embedder failed
    is retried on the next request).
    `stale` clears once the file is loaded again, or is back to exactly the served state (same
    mtime, size and inode, e.g. the original moved back into place).
    """

    def __init__(self, path: str | os.PathLike[str], matcher_factory: Callable[[Skillbook], SkillMatcher]) -> None:
        """Load `path` and build its match index now.

        `matcher_factory(skillbook) -> SkillMatcher` makes the one matcher used for the server's life.
        Raises `OSError` (e.g. `FileNotFoundError`) or `SkillbookError` (`SkillbookFormatError` for a
        malformed file) when the file cannot be loaded.
        """
        self.path = Path(path)
        signature = _signature(self.path)
        skillbook = Skillbook.load_from_file(self.path)
        self.matcher: SkillMatcher = matcher_factory(skillbook)
        self.matcher.refresh()
        self._state = ServedSkillbook(skillbook, catalog_json(skillbook), signature)
        self._failed: _Signature | None = None
        self._stale: str | None = None
        self._lock = threading.Lock()

    @property
    def stale(self) -> str | None:
        """Why the file on disk is not what is served (its last reload failed), or None."""
        return self._stale

    def current(self) -> ServedSkillbook:
        """The state of the file as it is now (reloading it first if it changed)."""
        signature = _signature(self.path)
        if signature == self._state.signature:
            if self._stale is not None:
                # The file is back to exactly what is served (e.g. a backup moved back into place):
                # nothing is stale any more.
                with self._lock:
                    if signature == self._state.signature:
                        self._failed = None
                        self._stale = None
            return self._state
        if signature == self._failed:
            return self._state
        with self._lock:
            if signature not in (self._state.signature, self._failed):
                self._reload(signature)
        return self._state

    def _reload(self, signature: _Signature) -> None:
        with tracing.span("skills_api.reload", path=str(self.path)) as span:
            try:
                if signature == _MISSING:
                    raise FileNotFoundError(f"{self.path} does not exist")
                skillbook = Skillbook.load_from_file(self.path)
                self.matcher.rebind(skillbook)
            except (OSError, SkillbookError, EmbeddingError) as error:
                # The documented failures of a load (missing or unreadable file, malformed content)
                # and of indexing; anything else is a bug and must not pass as a stale file.
                reason = f"{type(error).__name__}: {_one_short_line(str(error))}"
                span.record_exception(error, escaped=False)
                # Standard logging too: spans go nowhere unless the application configured tracing,
                # and the operator must see that the file is broken.
                logger.warning("skillbook %s could not be reloaded (%s); serving the last good state", self.path, reason)
                # A file that does not load is not retried until it changes again; a file that loaded
                # but could not be indexed (the embedder failed) is retried on the next request.
                self._failed = signature if not isinstance(error, EmbeddingError) else None
                self._stale = reason
                return
            self._state = ServedSkillbook(skillbook, catalog_json(skillbook), signature)
            self._failed = None
            self._stale = None


class PgWatchedSkillbook:
    """Serves a PostgreSQL skillbook and follows other writers' changes through LISTEN/NOTIFY
    (`PgFollower`): each committed write is applied to the one in-process Skillbook, only the rows
    changed since the served version are read, and the matcher is refreshed incrementally (only new
    or edited texts are embedded), in the follower's thread, so requests never wait for a reload.

    When the database cannot be reached, the last good state keeps being served, `stale` says why
    in one short line (the API's `X-Skillbook-Stale` header), and the follower reconnects every
    second; `stale` clears once it has caught up. Same interface as `WatchedSkillbook`.
    """

    def __init__(self, url: str, matcher_factory: Callable[[Skillbook], SkillMatcher]) -> None:
        """Read the skillbook and build its match index now. Raises `SkillbookStorageError` when the
        database cannot be reached, `FileNotFoundError` when it holds no skillbook of that name."""
        from ace.skillbook._pg_follow import PgFollower

        self.path = url
        self._follower = PgFollower(url, on_change=self._changed)
        self.display = self._follower.location.display
        skillbook = self._follower.skillbook
        self.matcher: SkillMatcher = matcher_factory(skillbook)
        self.matcher.refresh()
        self._index_error: str | None = None
        self._state = ServedSkillbook(skillbook, catalog_json(skillbook), (self._follower.version, 0, 0))
        self._follower.start()

    @property
    def version(self) -> int:
        """The database version served."""
        return self._state.signature[0]

    @property
    def stale(self) -> str | None:
        """Why the database's current state is not what is served, or None."""
        return self._follower.stale or self._index_error

    def current(self) -> ServedSkillbook:
        """The state served now (the follower keeps it up to date)."""
        return self._state

    def close(self) -> None:
        """Stop following the database."""
        self._follower.close()

    def _changed(self) -> None:
        skillbook = self._follower.skillbook
        with tracing.span("skills_api.reload", path=self.display, version=self._follower.version) as span:
            try:
                self.matcher.refresh()
                self._index_error = None
            except EmbeddingError as error:
                # The skills are served; their new texts are embedded on the next match or change.
                span.record_exception(error, escaped=False)
                self._index_error = f"{type(error).__name__}: {_one_short_line(str(error))}"
                logger.warning("skillbook %s: new skills could not be indexed (%s)", self.display, self._index_error)
        self._state = ServedSkillbook(skillbook, catalog_json(skillbook), (self._follower.version, 0, 0))


def watch(
    location: str | os.PathLike[str], matcher_factory: Callable[[Skillbook], SkillMatcher]
) -> WatchedSkillbook | PgWatchedSkillbook:
    """A `PgWatchedSkillbook` for a `postgresql://` URL, else a `WatchedSkillbook` for the file."""
    if is_database_url(location):
        return PgWatchedSkillbook(str(location), matcher_factory)
    return WatchedSkillbook(location, matcher_factory)
