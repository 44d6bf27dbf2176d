"""`ace match SKILLBOOK.json "task"`: the skills that apply to a task (offline models by default)."""

from __future__ import annotations

import argparse
import json

from ace.cli._app import CommandError
from ace.cli._reranker import add_reranker_options, reranker_from_args

__all__ = ["register"]


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace match`."""
    from ace.cli._skillbook_file import skillbook_location

    parser.add_argument("path", type=skillbook_location, help="skillbook JSON file or postgresql:// URL")
    parser.add_argument("task", help="the task text")
    parser.add_argument("--limit", type=int, default=3, help="most skills to print (default 3)")
    parser.add_argument("--json", action="store_true", help="print a JSON list like GET /memory/skills?task=")
    add_reranker_options(parser)
    parser.set_defaults(handler=_match)


def _match(args: argparse.Namespace) -> int:
    # Imported here: `ace --help` and the other commands need none of the matching stack.
    from ace.cli._skillbook_file import json_terminal_text, load_skillbook, terminal_text
    from ace.retrieval import EmbeddingError, default_embedder
    from ace.retrieval.matching import SkillMatcher
    from ace.retrieval.rerankers import RerankError
    from ace.serving import MAX_TASK_CHARS, match_json

    if args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    if not args.task.strip():
        raise CommandError('the task text is blank; pass the task to match, e.g. ace match sb.json "fix the CI"')
    if len(args.task) > MAX_TASK_CHARS:
        raise CommandError(f"the task is {len(args.task):,} characters, over the {MAX_TASK_CHARS:,}-character limit")
    reranker = reranker_from_args(args)
    skillbook = load_skillbook(args.path)
    # Match vectors come from the skillbook's sidecar; skills without one are embedded in memory
    # (a read-only command never writes the skillbook).
    try:
        matches = SkillMatcher(skillbook, embedder=default_embedder(), reranker=reranker).match(
            args.task, limit=args.limit
        )
    except (EmbeddingError, RerankError) as exc:
        raise CommandError(f"matching failed: {exc}") from exc
    if args.json:
        print(json_terminal_text(json.dumps([match_json(m) for m in matches], ensure_ascii=False, indent=2)))
    elif not matches:
        print("no skill applies to this task")
    else:
        for m in matches:
            print(terminal_text(f"{m.score:.3f}  {m.skill_id}  (matched on {m.matched_on})  {m.issue}"))
    return 0
