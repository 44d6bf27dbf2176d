"""`FileStore`: a skillbook in a JSON file (schema v2, `_json_format`) with its vectors in the
`.embeddings.npz` sidecar beside it (`_sidecar`, a cache that may be deleted); and `FileFollower`,
which reloads the file when it changes on disk.

Both files are written atomically (temp file, fsync, rename), so a reader sees a complete old or
new file. A symlink at the path is followed (the real file is replaced, its sidecar beside it); a
sidecar that is itself a symlink is refused (`SymlinkRefusedError`, nothing written).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from ace import tracing
from ace.atomic_write import write_atomic
from ace.skillbook._errors import SkillbookError
from ace.skillbook._skill import EmbeddingKind, skill_id_order
from ace.skillbook._state import SkillbookState
from ace.skillbook.storage._json_format import (
    MAX_SKILLBOOK_BYTES,
    StoredSkillbook,
    decode_skillbook,
    embedding_sidecar_path,
    state_to_json,
)
from ace.skillbook.storage._protocol import FollowTarget
from ace.untrusted import read_limited, short_line

if TYPE_CHECKING:
    from ace.skillbook.storage._sidecar import StoredEmbeddings

__all__ = ["FileFollower", "FileStore", "state_from_files", "state_from_json"]

logger = logging.getLogger("ace.skillbook")


class FileStore:
    """A skillbook file and its sidecar. Reads raise `OSError` (e.g. `FileNotFoundError`) when the
    file cannot be read and `SkillbookFormatError` for malformed content of either file."""

    def __init__(self, path: str | PathLike[str]) -> None:
        self.location = Path(path)
        """The path as given."""

    @property
    def display(self) -> str:
        """The path, for messages."""
        return str(self.location)

    def resolved(self) -> Path:
        """The real file (a symlink resolved), whose folder holds the sidecar and the lock."""
        return Path(os.path.realpath(self.location))

    def load(self, *, vectors: bool = True) -> SkillbookState:
        """The JSON and, unless `vectors=False`, the sidecar when there is one (absent: no vectors;
        a vector whose recorded text digest does not match its skill is dropped as stale)."""
        path = self.resolved()
        with tracing.span("skillbook.load", path=str(path)) as span:
            stored = decode_skillbook(read_limited(path, MAX_SKILLBOOK_BYTES), str(path))
            embeddings = None
            sidecar = embedding_sidecar_path(path)
            if vectors and sidecar.exists():
                from ace.skillbook.storage._sidecar import read_embeddings  # numpy: only when there are vectors

                embeddings = read_embeddings(sidecar, len(stored.skills))
            state = state_from_files(stored, embeddings, str(path))
            span.set_attribute("skills", len(state.skills))
            return state

    def save(self, state: SkillbookState) -> None:
        """Write the sidecar, then the JSON, each atomically (concurrent saves: the last rename wins)."""
        path = self.resolved()
        with tracing.span("skillbook.save", path=str(path)) as span:
            skills = sorted(state.skills.values(), key=lambda skill: skill_id_order(skill.id))
            document = state_to_json(state)
            span.set_attribute("skills", len(skills))
            path.parent.mkdir(parents=True, exist_ok=True)
            from ace.skillbook.storage._sidecar import write_embeddings  # numpy: loaded by the first save

            models = state.embedding_models
            # The sidecar is never written through a link: one planted beside the JSON would put the
            # file anywhere. The JSON itself may be a link the user made (`path` is resolved).
            write_atomic(
                embedding_sidecar_path(path),
                lambda handle: write_embeddings(handle, skills, models.get("search"), models.get("match")),
            )
            write_atomic(path, lambda handle: handle.write(document), follow_symlinks=True)

    @contextmanager
    def locked(self, *, timeout: float = -1) -> Iterator[_HeldFile]:
        """Hold `<file>.lock` (through a link or the real path, every process takes the same lock),
        read the file (empty when it does not exist) and yield it for the holder to save."""
        import filelock  # here: it costs tens of milliseconds, and only writers need it

        path = self.resolved()
        with filelock.FileLock(f"{path}.lock", timeout=timeout):
            yield _HeldFile(self, self.load() if path.exists() else SkillbookState())

    def follow(self, target: FollowTarget, *, on_change: Callable[[], None] | None = None) -> FileFollower:
        """Load the file into `target` now; the follower reloads it on `poll()` when it changed."""
        return FileFollower(self, target, on_change=on_change)


def state_from_files(stored: StoredSkillbook, embeddings: StoredEmbeddings | None, source: str) -> SkillbookState:
    """The skillbook a decoded JSON (`stored`) and its sidecar's vectors (`embeddings`, None when
    there is no sidecar) hold together; `source` names the file in errors."""
    skills = {skill.id: skill for skill in stored.skills}
    models: dict[EmbeddingKind, str | None] = {"search": None, "match": None}
    if embeddings is not None or any(
        skill.embedding is not None or skill.match_embedding is not None for skill in skills.values()
    ):
        from ace.skillbook.storage._sidecar import attach_vectors  # numpy: only when there are vectors

        models = attach_vectors(skills, embeddings, source)
    return SkillbookState(skills, dict(stored.last_numbers), dict(stored.similarity_decisions), models)


def state_from_json(data: bytes, source: str) -> SkillbookState:
    """The skillbook a JSON document holds (vectors stored inline by older files included);
    `source` names it in errors. Raises `SkillbookFormatError` like a load."""
    return state_from_files(decode_skillbook(data, source), None, source)


@dataclass
class _HeldFile:
    store: FileStore
    state: SkillbookState

    def save(self, state: SkillbookState) -> None:
        self.store.save(state)


_Signature = tuple[int, int, int]
_MISSING: _Signature = (-1, -1, -1)


def _signature(path: Path) -> _Signature:
    """(mtime_ns, size, inode) of `path`, or `_MISSING` when it cannot be stat'ed."""
    try:
        stat = os.stat(path)
    except OSError:
        return _MISSING
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class FileFollower:
    """Keeps a target at the content of a skillbook file: each `poll()` stats the file (one
    syscall) and, when its mtime, size or inode changed, loads it into the target in place.

    Saves are atomic renames, so a load never sees a half-written file. If a changed file cannot be
    loaded anyway (`OSError`: deleted, unreadable; `SkillbookError`: hand-edited into invalid JSON or
    a malformed skill), the last good state stays, a warning naming the error is logged (logger
    `ace.skillbook`; the `skillbook.reload` span records it too), `stale` says why in one short line,
    and that file state is not retried until the file changes again. `stale` clears once the file
    is loaded again, or is back to exactly the state held (same mtime, size and inode, e.g. the
    original moved back into place). `on_change()` runs after each load; when it raises, the load
    counts as done and `on_change` is called again at the next poll.
    """

    def __init__(self, store: FileStore, target: FollowTarget, *, on_change: Callable[[], None] | None = None) -> None:
        self.store = store
        self.target = target
        self.on_change = on_change
        self._lock = threading.Lock()
        signature = _signature(store.location)
        target.restore(store.load())
        self._held = signature
        self._failed: _Signature | None = None
        self._stale: str | None = None
        self._announced = True

    @property
    def stale(self) -> str | None:
        """Why the file on disk is not what is held (its last reload failed), or None."""
        return self._stale

    def start(self) -> None:
        """Nothing: the file is checked on `poll()`."""

    def close(self) -> None:
        """Nothing to release."""

    def poll(self) -> None:
        """Reload the file if it changed since the last load (see the class docstring)."""
        signature = _signature(self.store.location)
        if signature == self._held:
            if self._stale is not None or not self._announced:
                with self._lock:
                    self._failed = None
                    self._stale = None  # back to exactly what is held (e.g. a backup moved back)
                    self._announce()
            return
        if signature == self._failed:
            return
        with self._lock:
            if signature not in (self._held, self._failed):
                self._reload(signature)

    def _reload(self, signature: _Signature) -> None:
        with tracing.span("skillbook.reload", path=self.store.display) as span:
            try:
                if signature == _MISSING:
                    raise FileNotFoundError(f"{self.store.location} does not exist")
                state = self.store.load()
            except (OSError, SkillbookError) as error:
                # The documented failures of a load; anything else is a bug and must not pass as a stale file.
                reason = f"{type(error).__name__}: {short_line(str(error))}"
                span.record_exception(error, escaped=False)
                logger.warning(
                    "skillbook %s could not be reloaded (%s); serving the last good state", self.store.location, reason
                )
                self._failed, self._stale = signature, reason
                return
            self.target.restore(state)
            self._held, self._failed, self._stale, self._announced = signature, None, None, False
            self._announce()

    def _announce(self) -> None:
        if self.on_change is not None and not self._announced:
            self.on_change()
        self._announced = True
