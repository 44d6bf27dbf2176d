"""`WatchedSkillbook`: the skillbook file as served, reloaded when the file changes on disk."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import logfire

from ace.retrieval.embedder import EmbeddingError
from ace.retrieval.matching import SkillMatcher
from ace.skillbook import Skillbook

__all__ = ["ServedSkillbook", "WatchedSkillbook"]

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
    """(mtime_ns, size, inode) of the file this state was loaded from."""


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


class WatchedSkillbook:
    """Serves a skillbook file and follows it: each `current()` stats the file (one syscall) and,
    when its mtime, size or inode changed, loads it and rebinds the matcher (only new or edited
    skill texts are embedded).

    Saves are atomic renames, so a load never sees a half-written file. If a changed file cannot be
    loaded anyway (hand-edited into invalid JSON, deleted), the last good state keeps being served,
    a warning naming the error is logged (logger `ace.server`; the reload span records it too),
    `stale` says why, and that file state is not retried until the file changes again (a file that
    loaded but could not be indexed because the embedder failed is retried on the next request).
    """

    def __init__(self, path: str | os.PathLike[str], matcher_factory: Callable[[Skillbook], SkillMatcher]) -> None:
        """Load `path` and build its match index now.

        `matcher_factory(skillbook) -> SkillMatcher` makes the one matcher used for the server's life.
        Raises `FileNotFoundError` or `SkillbookFormatError` when the file cannot be loaded.
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
        if signature in (self._state.signature, self._failed):
            return self._state
        with self._lock:
            if signature not in (self._state.signature, self._failed):
                self._reload(signature)
        return self._state

    def _reload(self, signature: _Signature) -> None:
        with logfire.span("skills_api.reload", path=str(self.path)) as span:
            try:
                if signature == _MISSING:
                    raise FileNotFoundError(f"{self.path} does not exist")
                skillbook = Skillbook.load_from_file(self.path)
                self.matcher.rebind(skillbook)
            except Exception as error:  # noqa: BLE001 - any load failure keeps the last good state
                span.set_level("warn")
                span.record_exception(error, escaped=False)
                # Standard logging too: `ace serve` does not configure logfire, and an unconfigured
                # logfire drops its records, so the operator would never see that the file is broken.
                logger.warning(
                    "skillbook %s could not be reloaded (%r); serving the last good state", self.path, error
                )
                # A file that does not load is not retried until it changes again; a file that loaded
                # but could not be indexed (the embedder failed) is retried on the next request.
                self._failed = signature if not isinstance(error, EmbeddingError) else None
                self._stale = f"{type(error).__name__}: {error}"
                return
            self._state = ServedSkillbook(skillbook, catalog_json(skillbook), signature)
            self._failed = None
            self._stale = None
