"""`ace serve SKILLBOOK.json|postgresql://...`: the skills HTTP API on uvicorn (127.0.0.1:8765 by default)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ace.cli._app import CommandError
from ace.cli._logging import add_log_level_option, configure_logging
from ace.cli._reranker import add_reranker_options, reranker_from_args

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "register"]

DEFAULT_HOST = "127.0.0.1"
"""Loopback only: expose the API on another interface deliberately, with --host."""
DEFAULT_PORT = 8765


def register(subparsers: Any) -> None:
    """Add the `serve` command to the `ace` parser."""
    parser = subparsers.add_parser("serve", help="serve the skills HTTP API (/memory/skills) over a skillbook (file or postgresql:// URL)")
    from ace.cli._skillbook_file import skillbook_location

    parser.add_argument(
        "path", type=skillbook_location,
        help="skillbook JSON file (re-read when it changes) or postgresql:// URL (followed through LISTEN/NOTIFY)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"interface to bind (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    add_reranker_options(parser)
    add_log_level_option(parser)
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from ace.server import create_app
        from ace.server._access_log import access_log_config
    except ImportError as exc:
        raise CommandError(f"the server extra is not installed ({exc.name}); run pip install 'ace[server]'") from None
    from ace.cli._skillbook_file import format_error_line, require_file, shown, terminal_text
    from ace.skillbook import SkillbookError, SkillbookFormatError

    require_file(args.path)
    configure_logging(args.log_level)
    reranker = reranker_from_args(args)
    try:
        app = create_app(args.path, reranker=reranker)
    except (OSError, SkillbookError) as exc:
        if isinstance(exc, SkillbookFormatError):
            message = format_error_line(exc)
        elif isinstance(exc, SkillbookError):  # SkillbookStorageError: names the database already
            message = terminal_text(str(exc), one_line=True)
        else:
            message = f"{shown(args.path)}: {exc.strerror or exc}"
        raise CommandError(" ".join(message.split())) from None
    print(terminal_text(f"serving {shown(args.path)} on http://{args.host}:{args.port} (Ctrl+C to stop)"), file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, log_config=access_log_config())
    return 0
