"""The app `ace serve` runs, made from its options: in the command's own process, or in each of the
`--workers` processes, where uvicorn imports `worker_app` by name and calls it.

Workers get the options through a file only the user can read, in a folder of its own, named by
the `ACE_SERVE_OPTIONS_FILE` environment variable and deleted when the server stops: a database
URL's password or an API key never appears on a command line (where `ps` shows it to every user).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ace.cli._app import CommandError
from ace.cli._logging import configure_logging
from ace.cli._reranker import reranker_from_args

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["OPTIONS_FILE_ENV", "ServeOptions", "build_app", "options_file", "worker_app"]

OPTIONS_FILE_ENV = "ACE_SERVE_OPTIONS_FILE"
"""The environment variable naming the options file of `ace serve --workers`."""


@dataclass(frozen=True)
class ServeOptions:
    """Everything `ace serve` makes its app from (JSON-able, so workers can read it from a file)."""

    location: str
    """The skillbook file or `postgresql://` URL (with its password: never print it, see `shown`)."""
    reranker: dict[str, str | None]
    """`--reranker`, `--reranker-model`, `--api-base`, `--api-key`, by their argparse names."""
    allowed_hosts: list[str]
    """Host header patterns the API answers."""
    body_timeout_s: float | None
    """Seconds a body may take to arrive; None: the server's default."""
    allow_edits: bool
    """Whether the UI offers edits."""
    edit_hostnames: list[str]
    """Host names an edit request may be addressed to."""
    edit_token: str | None
    """The token of the UI's edit forms, shared by every worker; None: one per process."""
    runs_dir: str | None
    """The folder of e2e runs the UI lists; None: none."""
    task_cache_entries: int
    """Task vectors kept (0: no cache)."""
    batch_tasks: bool
    """Whether concurrent requests share embedding calls."""
    embedder_threads: int | None
    """onnxruntime threads of the local embedder; None: the shared default embedder."""
    log_level: str
    """`--log-level`."""


def build_app(options: ServeOptions) -> FastAPI:
    """The skills API and UI `options` describe. Raises what `create_app` raises and `CommandError`
    for a reranker that cannot be made."""
    from ace.retrieval.local_embedder import LocalEmbedder
    from ace.server import create_app
    from ace.server.ui import UiOptions

    ui = UiOptions(
        allow_edits=options.allow_edits,
        runs_dir=Path(options.runs_dir) if options.runs_dir is not None else None,
        edit_hostnames=frozenset(options.edit_hostnames),
        edit_token=options.edit_token,
    )
    limits: dict[str, Any] = {"allowed_hosts": options.allowed_hosts}
    if options.body_timeout_s is not None:
        limits["body_timeout_s"] = options.body_timeout_s
    embedder = LocalEmbedder(threads=options.embedder_threads) if options.embedder_threads is not None else None
    return create_app(
        options.location,
        embedder=embedder,
        reranker=reranker_from_args(argparse.Namespace(**options.reranker)),
        ui=ui,
        task_cache_entries=options.task_cache_entries,
        batch_tasks=options.batch_tasks,
        **limits,
    )


@contextmanager
def options_file(options: ServeOptions) -> Iterator[Path]:
    """Write `options` to a new file readable by this user only, set `OPTIONS_FILE_ENV` to it for
    the worker processes started meanwhile, and delete it (and unset the variable) on exit."""
    folder = Path(tempfile.mkdtemp(prefix="ace-serve-"))  # mode 0700
    path = folder / "options.json"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            json.dump(asdict(options), stream)
        os.environ[OPTIONS_FILE_ENV] = str(path)
        yield path
    finally:
        os.environ.pop(OPTIONS_FILE_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)


def worker_app() -> FastAPI:
    """The app of one `ace serve --workers` process (uvicorn's app factory): made from the options
    file `OPTIONS_FILE_ENV` names. Raises `CommandError` when the variable or the file is missing."""
    path = os.environ.get(OPTIONS_FILE_ENV)
    if not path:
        raise CommandError(f"{OPTIONS_FILE_ENV} is not set: worker_app is started by `ace serve --workers N`")
    try:
        options = ServeOptions(**json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as error:
        raise CommandError(f"cannot read the options of ace serve from {path}: {error}") from None
    configure_logging(options.log_level)
    return build_app(options)
