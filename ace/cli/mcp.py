"""`ace mcp SKILLBOOK.json`: the skillbook as an MCP server, over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ace.cli._app import CommandError
from ace.cli._logging import add_log_level_option, configure_logging
from ace.cli._reranker import add_reranker_options, reranker_from_args
from ace.cli._skillbook_file import skillbook_location
from ace.cli.serve import add_task_cache_option, check_task_cache

if TYPE_CHECKING:
    from ace.mcp import TraceQuota

__all__ = ["DEFAULT_PORT", "HOST", "register"]

HOST = "127.0.0.1"
"""`--http` binds loopback only: the tools read the skillbook and write trace files."""
DEFAULT_PORT = 8766


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace mcp`."""
    parser.add_argument(
        "path",
        type=skillbook_location,
        help="skillbook JSON file (re-read when it changes) or postgresql:// URL (followed through LISTEN/NOTIFY)",
    )
    parser.add_argument(
        "--http", action="store_true", help=f"serve streamable HTTP on {HOST} (at /mcp) instead of stdio"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port for --http (default {DEFAULT_PORT})")
    parser.add_argument(
        "--traces",
        type=Path,
        metavar="DIR",
        help="folder record_trace writes to (default: <skillbook stem>.traces beside the file)",
    )
    parser.add_argument(
        "--max-queued-traces",
        type=int,
        default=None,
        metavar="N",
        help="most traces the folder may hold; record_trace is refused beyond (default 10000)",
    )
    parser.add_argument(
        "--max-queued-bytes",
        type=int,
        default=None,
        metavar="BYTES",
        help="most bytes of traces the folder may hold; record_trace is refused beyond (default 536870912, 512 MiB)",
    )
    add_task_cache_option(parser)
    add_reranker_options(parser)
    add_log_level_option(parser)
    parser.set_defaults(handler=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    try:
        from ace.mcp import create_server
    except ImportError as exc:
        raise CommandError(
            f"ace mcp needs the mcp extra, mcp 1.x ({exc.name or exc} is missing); run pip install 'ace[mcp]'"
        ) from None
    from ace.cli._skillbook_file import format_error_line, require_file, shown
    from ace.skillbook import SkillbookError, SkillbookFormatError
    from ace.skillbook.storage import FileStore, open_store

    if not 0 < args.port < 65536:
        raise CommandError(f"--port must be 1-65535, got {args.port}")
    check_task_cache(args)
    require_file(args.path)
    configure_logging(args.log_level)
    if args.traces is None and not isinstance(open_store(args.path), FileStore):
        raise CommandError("a skillbook in PostgreSQL needs --traces DIR (the folder record_trace writes to)")
    quota = _trace_quota(args)
    reranker = reranker_from_args(args)
    try:
        server = create_server(
            args.path,
            reranker=reranker,
            traces=args.traces,
            trace_quota=quota,
            log_level=args.log_level,
            task_cache_entries=args.task_cache,
        )
    except (OSError, SkillbookError) as exc:
        if isinstance(exc, SkillbookFormatError):
            message = format_error_line(exc)
        elif isinstance(exc, SkillbookError):  # SkillbookStorageError: names the database already
            message = str(exc)
        else:
            message = f"{shown(args.path)}: {exc.strerror or exc}"
        raise CommandError(message) from None
    if args.http:
        server.settings.host = HOST
        server.settings.port = args.port
        server.run("streamable-http")
    else:
        server.run("stdio")
    return 0


def _trace_quota(args: argparse.Namespace) -> TraceQuota:
    from ace.mcp import TraceQuota

    limits = {"max_traces": args.max_queued_traces, "max_bytes": args.max_queued_bytes}
    for flag, value in (("--max-queued-traces", args.max_queued_traces), ("--max-queued-bytes", args.max_queued_bytes)):
        if value is not None and value < 1:
            raise CommandError(f"{flag} must be at least 1, got {value}")
    return TraceQuota(**{name: value for name, value in limits.items() if value is not None})
