"""`ace serve SKILLBOOK.json|postgresql://...`: the skills HTTP API and the UI at /ui on uvicorn
(127.0.0.1:8765 by default)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ace.cli._app import CommandError
from ace.cli._logging import add_log_level_option, configure_logging
from ace.cli._reranker import add_reranker_options, reranker_from_args

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "register"]

DEFAULT_HOST = "127.0.0.1"
"""Loopback only: expose the API on another interface deliberately, with --host."""
DEFAULT_PORT = 8765
_WILDCARDS = ("0.0.0.0", "::", "[::]", "")


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace serve`."""
    from ace.cli._skillbook_file import skillbook_location

    parser.add_argument(
        "path", type=skillbook_location,
        help="skillbook JSON file (re-read when it changes) or postgresql:// URL (followed through LISTEN/NOTIFY)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"interface to bind (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--allowed-host", action="append", default=[], metavar="NAME",
        help="also answer requests whose Host is NAME (repeatable; '*.example.com' patterns, '*' for any); by "
        "default only localhost, 127.0.0.1, [::1] and the --host address: other Hosts get 400 (DNS rebinding)",
    )
    parser.add_argument(
        "--body-timeout", type=float, default=None, metavar="SECONDS",
        help="seconds a request body may take to arrive before it is answered 408 (default 30)",
    )
    parser.add_argument(
        "--runs", type=Path, metavar="DIR",
        help="folder of ace-eval e2e run folders (e.g. results/e2e) to list at /ui/runs with their reports",
    )
    parser.add_argument(
        "--allow-edits", action="store_true",
        help="let skill pages of the UI remove or activate a skill (recorded with origin ui); default read-only",
    )
    add_reranker_options(parser)
    add_log_level_option(parser)
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from ace.server import access_log_config, allowed_host_patterns, create_app
    except ImportError as exc:
        raise CommandError(f"the server extra is not installed ({exc.name}); run pip install 'ace[server]'") from None
    from ace.cli._skillbook_file import format_error_line, require_file, shown, terminal_text
    from ace.server.ui import LOOPBACK_NAMES, UiOptions
    from ace.skillbook import SkillbookError, SkillbookFormatError

    require_file(args.path)
    configure_logging(args.log_level)
    if args.runs is not None and not args.runs.is_dir():
        raise CommandError(f"--runs {args.runs} is not a folder; give the folder "
                           "holding the e2e run folders (e.g. results/e2e)")
    reranker = reranker_from_args(args)
    # Edits are addressed to this machine by a loopback name, or to the address the server is bound to.
    hostnames = LOOPBACK_NAMES | ({args.host.lower().strip("[]")} if args.host not in _WILDCARDS else set())
    ui = UiOptions(allow_edits=args.allow_edits, runs_dir=args.runs, edit_hostnames=frozenset(hostnames))
    limits: dict[str, Any] = {"allowed_hosts": allowed_host_patterns(args.allowed_host, bound=args.host)}
    if args.body_timeout is not None:
        if not 0 < args.body_timeout <= 3600:
            raise CommandError(f"--body-timeout must be more than 0 and at most 3600 seconds, got {args.body_timeout:g}")
        limits["body_timeout_s"] = args.body_timeout
    try:
        app = create_app(args.path, reranker=reranker, ui=ui, **limits)
    except (OSError, SkillbookError) as exc:
        if isinstance(exc, SkillbookFormatError):
            message = format_error_line(exc)
        elif isinstance(exc, SkillbookError):  # SkillbookStorageError: names the database already
            message = str(exc)
        else:
            message = f"{shown(args.path)}: {exc.strerror or exc}"
        raise CommandError(message) from None
    base = f"http://{args.host}:{args.port}"
    print(terminal_text(f"serving {shown(args.path)} on {base}, the UI at {base}/ui"
                        f"{' (edits allowed)' if args.allow_edits else ''} (Ctrl+C to stop)"), file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, log_config=access_log_config())
    return 0
