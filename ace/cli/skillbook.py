"""`ace skillbook ...`: inspect a skillbook (file or postgresql:// URL), export it to Markdown or Agent Skills (SKILL.md
folders), import SKILL.md folders, remove, activate or purge a skill."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ace.atomic_write import write_text_atomic
from ace.cli._app import CommandError
from ace.cli._skillbook_file import json_terminal_text, load_skillbook, shown, skillbook_location, terminal_text
from ace.skillbook import SECTIONS, Skill, Skillbook, SkillbookError, manual_source, render_markdown
from ace.untrusted import quote

__all__ = ["register"]


_LOCATION_HELP = "skillbook JSON file or postgresql:// URL"


def register(group: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace skillbook`: its sub-commands."""
    commands = group.add_subparsers(dest="skillbook_command", metavar="SUBCOMMAND", required=True)

    show = _command(commands, "show", "print the skills (active ones unless --all)", _show)
    show.add_argument("--section", choices=SECTIONS, help="only this section")
    show.add_argument("--all", action="store_true", help="include inactive (soft-removed) skills")
    _command(commands, "stats", "print skill counts and provenance summary as JSON", _stats)
    _command(commands, "sources", "print a skill's provenance records as JSON", _sources, skill_id=True)
    export = _command(commands, "export-md", "write the skillbook as a Markdown document", _export_md)
    export.add_argument("-o", "--output", type=Path, required=True, help="Markdown file to write")
    _register_agent_skills(commands)

    remove = _command(
        commands,
        "remove",
        "soft-remove a skill: inactive, never injected or matched, history kept (undo: activate)",
        _remove,
        skill_id=True,
    )
    remove.add_argument("--reason", required=True, help="why, recorded in the skill's provenance")
    activate = _command(
        commands, "activate", "re-activate an inactive skill (promote a draft)", _activate, skill_id=True
    )
    activate.add_argument("--reason", help="why, recorded in the skill's provenance")
    purge = _command(commands, "purge", "delete a skill for good (its id is never reused)", _purge, skill_id=True)
    purge.add_argument("--yes", action="store_true", help="confirm the deletion")

    copy = commands.add_parser(
        "copy", help="copy a skillbook between files and postgresql:// databases (skills, counters, vectors)"
    )
    copy.add_argument("source", type=skillbook_location, metavar="SRC", help=_LOCATION_HELP)
    copy.add_argument("destination", type=skillbook_location, metavar="DST", help=_LOCATION_HELP)
    copy.add_argument("--replace", action="store_true", help="overwrite a DST that already holds a skillbook")
    copy.set_defaults(handler=_copy)


def _command(
    commands: Any, name: str, help: str, handler: Callable[[argparse.Namespace], int], *, skill_id: bool = False
) -> argparse.ArgumentParser:
    """A sub-command over one skillbook (`path`), and over one of its skills when `skill_id`."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help)
    parser.add_argument("path", type=skillbook_location, help=_LOCATION_HELP)
    if skill_id:
        parser.add_argument("skill_id", help="e.g. context-00001")
    parser.set_defaults(handler=handler)
    return parser


def _register_agent_skills(commands: Any) -> None:
    """`export-skills` and `import-skills`: SKILL.md folders out and in."""
    export_skills = commands.add_parser(
        "export-skills", help="write each active skill as an Agent Skills folder (OUT_DIR/<name>/SKILL.md)"
    )
    export_skills.add_argument("path", type=skillbook_location, metavar="SKILLBOOK", help=_LOCATION_HELP)
    export_skills.add_argument(
        "out_dir",
        type=Path,
        metavar="OUT_DIR",
        help="folder to create or update in place (only folders exported by ace are replaced or removed)",
    )
    export_skills.set_defaults(handler=_export_skills)

    import_skills = commands.add_parser(
        "import-skills", help="add a skill for every DIR/<name>/SKILL.md (exit 1 if any file failed)"
    )
    import_skills.add_argument("folder", type=Path, metavar="DIR", help="folder of skill folders, or one skill folder")
    import_skills.add_argument(
        "path",
        type=skillbook_location,
        metavar="SKILLBOOK",
        help="skillbook JSON file (created if missing) or postgresql:// URL",
    )
    import_skills.add_argument(
        "--section",
        choices=SECTIONS,
        default="context",
        help="section of skills not exported by ace (default: context; ours keep theirs)",
    )
    import_skills.set_defaults(handler=_import_skills)


def _require(skillbook: Skillbook, skill_id: str, path: Path | str) -> Skill:
    skill = skillbook.get_skill(skill_id)
    if skill is None:
        raise CommandError(f"{shown(path)}: no skill with id {quote(skill_id)}")
    return skill


def _show(args: argparse.Namespace) -> int:
    skills = load_skillbook(args.path, vectors=False).skills(include_inactive=args.all)
    for skill in skills:
        if args.section and skill.section != args.section:
            continue
        state = "" if skill.active else " (inactive)"
        print(f"- [{skill.id}]{state}")
        print(terminal_text(f"  Keywords: {', '.join(skill.keywords)}"))
        print(terminal_text(f"  Issue: {skill.issue}"))
        if skill.insight is not None:
            print(terminal_text(f"  Insight: {skill.insight}"))
        print(f"  Counters: {skill.counters_text()}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    skillbook = load_skillbook(args.path, vectors=False)
    report = {**skillbook.stats(), "sources": skillbook.source_summary()}
    print(json_terminal_text(json.dumps(report, indent=2, ensure_ascii=False, default=str)))
    return 0


def _sources(args: argparse.Namespace) -> int:
    skill = _require(load_skillbook(args.path, vectors=False), args.skill_id, args.path)
    occurrences = [source.to_dict() for source in skill.occurrences]
    print(json_terminal_text(json.dumps(occurrences, indent=2, ensure_ascii=False)))
    return 0


def _export_md(args: argparse.Namespace) -> int:
    skillbook = load_skillbook(args.path, vectors=False)
    try:
        title = args.path.stem if isinstance(args.path, Path) else "skillbook"
        write_text_atomic(args.output, render_markdown(skillbook.skills(include_inactive=True), title=title))
    except OSError as exc:
        raise CommandError(f"{args.output}: cannot write ({exc.strerror})") from None
    print(terminal_text(f"wrote {args.output}"))
    return 0


def _export_skills(args: argparse.Namespace) -> int:
    from ace.skillbook.agent_skills import SkillMdError, export_agent_skills

    skillbook = load_skillbook(args.path, vectors=False)
    try:
        report = export_agent_skills(skillbook, args.out_dir)
    except SkillMdError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        where = exc.filename or args.out_dir
        raise CommandError(f"{where}: cannot write ({exc.strerror or exc})") from None
    print(
        terminal_text(
            f"exported {len(report.written) + len(report.unchanged)} skills to {args.out_dir}: {len(report.written)} "
            f"written, {len(report.unchanged)} unchanged, {len(report.removed)} removed"
        )
    )
    return 0


def _import_skills(args: argparse.Namespace) -> int:
    from ace.skillbook.agent_skills import import_agent_skills

    if not args.folder.is_dir():
        raise CommandError(f"{args.folder}: no such folder")
    if isinstance(args.path, Path) and args.path.exists():
        load_skillbook(args.path)  # a malformed file is a one-line error, not an empty skillbook
    try:
        with Skillbook.locked(args.path) as skillbook:
            report = import_agent_skills(args.folder, skillbook, section=args.section)
    except OSError as exc:
        where = exc.filename or args.folder
        raise CommandError(f"{where}: cannot read or write ({exc.strerror or exc})") from None
    except SkillbookError as exc:  # a database that cannot be reached, or holds a malformed skillbook
        raise CommandError(str(exc)) from None
    for path, skill_id in report.added:
        print(terminal_text(f"added {skill_id} from {path}", one_line=True))
    for path, skill_id in report.skipped:
        print(terminal_text(f"skipped {path}: already in the skillbook as {skill_id}", one_line=True))
    for _, message in report.failed:
        print(f"ace: error: {terminal_text(message, one_line=True)}", file=sys.stderr)
    print(
        terminal_text(
            f"imported {len(report.added)} skills into {shown(args.path)}: {len(report.skipped)} already present, "
            f"{len(report.failed)} failed"
        )
    )
    return 1 if report.failed else 0


def _remove(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise CommandError("--reason must not be empty: say why the skill is removed")
    load_skillbook(args.path)  # a missing or malformed file is a one-line error, not an empty skillbook
    with Skillbook.locked(args.path) as skillbook:
        skill = _require(skillbook, args.skill_id, args.path)
        if not skill.active:
            raise CommandError(f"{shown(args.path)}: {args.skill_id} is already inactive")
        skillbook.remove_skill(args.skill_id, args.reason, insight_source=manual_source("cli", reason=args.reason))
    print(
        terminal_text(f"removed {args.skill_id} from {shown(args.path)} (inactive; undo with ace skillbook activate)")
    )
    return 0


def _activate(args: argparse.Namespace) -> int:
    load_skillbook(args.path)  # a missing or malformed file is a one-line error, not an empty skillbook
    with Skillbook.locked(args.path) as skillbook:
        skill = _require(skillbook, args.skill_id, args.path)
        if skill.active:
            raise CommandError(f"{shown(args.path)}: {args.skill_id} is already active")
        skillbook.activate_skill(args.skill_id, insight_source=manual_source("cli", reason=args.reason))
    print(terminal_text(f"activated {args.skill_id} in {shown(args.path)}"))
    return 0


def _copy(args: argparse.Namespace) -> int:
    from ace.skillbook import SkillbookStorageError
    from ace.skillbook.storage import FileStore, open_store

    skillbook = load_skillbook(args.source)
    source, destination = shown(args.source), shown(args.destination)
    if not args.replace:
        if not isinstance(open_store(args.destination), FileStore):
            try:
                Skillbook.load_from_file(args.destination)
            except FileNotFoundError:
                pass
            except SkillbookStorageError as exc:
                raise CommandError(str(exc)) from None
            except SkillbookError:
                raise CommandError(f"{destination} already holds a skillbook; add --replace") from None
            else:
                raise CommandError(f"{destination} already holds a skillbook; add --replace")
        elif Path(args.destination).exists():
            raise CommandError(f"{destination} already exists; add --replace")
    try:
        skillbook.save_to_file(args.destination)
    except SkillbookError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"{destination}: cannot write ({exc.strerror or exc})") from None
    print(terminal_text(f"copied {len(skillbook)} skills from {source} to {destination}"))
    return 0


def _purge(args: argparse.Namespace) -> int:
    if not args.yes:
        raise CommandError(
            terminal_text(f"purging {args.skill_id} deletes it for good; add --yes to confirm", one_line=True)
        )
    load_skillbook(args.path)
    with Skillbook.locked(args.path) as skillbook:
        _require(skillbook, args.skill_id, args.path)
        skillbook.purge(args.skill_id)
    print(terminal_text(f"purged {args.skill_id} from {shown(args.path)}"))
    return 0
