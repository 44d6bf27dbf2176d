"""`ace serve SKILLBOOK.json|postgresql://...`: the skills HTTP API and the UI at /ui on uvicorn
(127.0.0.1:8765 by default)."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ace.cli._app import CommandError
from ace.cli._logging import add_log_level_option, configure_logging
from ace.cli._reranker import add_reranker_options, reranker_from_args

if TYPE_CHECKING:
    from ace.cli._serve_app import ServeOptions

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "MAX_WORKERS", "register"]

T = TypeVar("T")

DEFAULT_HOST = "127.0.0.1"
"""Loopback only: expose the API on another interface deliberately, with --host."""
DEFAULT_PORT = 8765
MAX_WORKERS = 64
"""Most `--workers`: each process holds the model and the index (about 150 MB at 5,000 skills)."""
DEFAULT_TASK_CACHE = 16_384
"""Task vectors `ace serve` keeps by default (`ace.retrieval.task_vector_cache.DEFAULT_CACHE_ENTRIES`)."""
_WILDCARDS = ("0.0.0.0", "::", "[::]", "")


def add_task_cache_option(parser: argparse.ArgumentParser, *, per: str = "") -> None:
    """`--task-cache N` of the commands that match tasks (`ace serve`, `ace mcp`); `per` qualifies the default."""
    parser.add_argument(
        "--task-cache",
        type=int,
        default=DEFAULT_TASK_CACHE,
        metavar="N",
        help=f"keep the vectors of the last N distinct tasks, so a repeated task is not embedded again "
        f"({per}default {DEFAULT_TASK_CACHE:,}, at most 32 MiB; 0: none)",
    )


def check_task_cache(args: argparse.Namespace) -> None:
    """Raise `CommandError` for a negative `--task-cache`."""
    if args.task_cache < 0:
        raise CommandError(f"--task-cache must be 0 (no cache) or more task vectors, got {args.task_cache}")


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace serve`."""
    from ace.cli._skillbook_file import skillbook_location

    parser.add_argument(
        "path",
        type=skillbook_location,
        help="skillbook JSON file (re-read when it changes) or postgresql:// URL (followed through LISTEN/NOTIFY)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"interface to bind (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME (repeatable; '*.example.com' patterns, '*' for any); by "
        "default only localhost, 127.0.0.1, [::1] and the --host address: other Hosts get 400 (DNS rebinding)",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds a request body may take to arrive before it is answered 408 (default 30)",
    )
    parser.add_argument(
        "--runs",
        type=Path,
        metavar="DIR",
        help="folder of ace-eval e2e run folders (e.g. results/e2e) to list at /ui/runs with their reports",
    )
    parser.add_argument(
        "--allow-edits",
        action="store_true",
        help="let skill pages of the UI remove or activate a skill (recorded with origin ui); default read-only",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve from N processes (e.g. one per core), each following the skillbook (default 1)",
    )
    add_task_cache_option(parser, per="per process; ")
    parser.add_argument(
        "--no-batching",
        action="store_true",
        help="embed each request's task on its own (default: concurrent requests share embedding calls)",
    )
    add_reranker_options(parser)
    add_log_level_option(parser)
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from ace.server import access_log_config, allowed_host_patterns
    except ImportError as exc:
        raise CommandError(f"the server extra is not installed ({exc.name}); run pip install 'ace[server]'") from None
    from ace.cli._serve_app import build_app, options_file
    from ace.cli._skillbook_file import require_file, shown, terminal_text

    require_file(args.path)
    configure_logging(args.log_level)
    options = _options(args, allowed_host_patterns(args.allowed_host, bound=args.host))
    base = f"http://{args.host}:{args.port}"
    workers = f", {args.workers} worker processes" if args.workers > 1 else ""
    started = terminal_text(
        f"serving {shown(args.path)} on {base}, the UI at {base}/ui"
        f"{' (edits allowed)' if args.allow_edits else ''}{workers} (Ctrl+C to stop)"
    )
    run: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        "log_config": access_log_config(),
    }
    if args.workers == 1:
        app = _loaded(args.path, lambda: build_app(options))
        print(started, file=sys.stderr)
        uvicorn.run(app, **run)
        return 0
    from ace.skillbook.storage import open_store

    # Refused here, in one line, rather than by every worker: a bad reranker, an unreadable skillbook.
    reranker_from_args(args)
    _loaded(args.path, lambda: open_store(args.path).load(vectors=False))
    with options_file(options):
        print(started, file=sys.stderr)
        uvicorn.run("ace.cli._serve_app:worker_app", factory=True, workers=args.workers, **run)
    return 0


def _options(args: argparse.Namespace, allowed_hosts: list[str]) -> ServeOptions:
    """The app's options from the command line; raises `CommandError` for a bad value."""
    from ace.cli._serve_app import ServeOptions
    from ace.server.ui import LOOPBACK_NAMES

    if args.runs is not None and not args.runs.is_dir():
        raise CommandError(
            f"--runs {args.runs} is not a folder; give the folder holding the e2e run folders (e.g. results/e2e)"
        )
    if args.body_timeout is not None and not 0 < args.body_timeout <= 3600:
        raise CommandError(f"--body-timeout must be more than 0 and at most 3600 seconds, got {args.body_timeout:g}")
    if not 1 <= args.workers <= MAX_WORKERS:
        raise CommandError(f"--workers must be within 1..{MAX_WORKERS}, got {args.workers}")
    check_task_cache(args)
    # Edits are addressed to this machine by a loopback name, or to the address the server is bound to.
    hostnames = LOOPBACK_NAMES | ({args.host.lower().strip("[]")} if args.host not in _WILDCARDS else set())
    cores = os.cpu_count() or 1
    return ServeOptions(
        location=str(args.path),
        reranker={name: getattr(args, name) for name in ("reranker", "reranker_model", "api_base", "api_key")},
        allowed_hosts=list(allowed_hosts),
        body_timeout_s=args.body_timeout,
        allow_edits=args.allow_edits,
        edit_hostnames=sorted(hostnames),
        # One token for every worker, so a form one worker served is accepted by the one that gets it back.
        edit_token=secrets.token_urlsafe(32) if args.allow_edits and args.workers > 1 else None,
        runs_dir=str(args.runs) if args.runs is not None else None,
        task_cache_entries=args.task_cache,
        batch_tasks=not args.no_batching,
        # Workers share the cores: each embeds with its share of them instead of all of them.
        embedder_threads=max(1, cores // args.workers) if args.workers > 1 else None,
        log_level=args.log_level,
    )


def _loaded(path: str, load: Callable[[], T]) -> T:
    """`load()`, its failure to read the skillbook at `path` made one `CommandError` line."""
    from ace.cli._skillbook_file import format_error_line, shown
    from ace.skillbook import SkillbookError, SkillbookFormatError

    try:
        return load()
    except (OSError, SkillbookError) as exc:
        if isinstance(exc, SkillbookFormatError):
            message = format_error_line(exc)
        elif isinstance(exc, SkillbookError):  # SkillbookStorageError: names the database already
            message = str(exc)
        else:
            message = f"{shown(path)}: {exc.strerror or exc}"
        raise CommandError(message) from None
