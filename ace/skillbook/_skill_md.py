"""The SKILL.md file format of Agent Skills (https://agentskills.io/specification): YAML front matter
between `---` lines, then a Markdown body. Rendering a Skill as one, parsing one, and the rules its
front matter must satisfy.

Machine-readable data of ours lives in the spec's `metadata` map (string keys, string values), with
keys prefixed `ace-`; the provenance footer of the body is for people and is never read back.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import yaml

from ace.skillbook._errors import SkillbookError
from ace.skillbook._skill import MAX_ID_DIGITS, VALID_SECTIONS, Section, Skill
from ace.untrusted import UntrustedInputError, check_text, quote

__all__ = [
    "FOOTER_MARKER",
    "HARNESS_PLACEHOLDER",
    "MAX_DESCRIPTION_CHARS",
    "MAX_FRONT_MATTER_CHARS",
    "MAX_NAME_CHARS",
    "ParsedSkillMd",
    "SkillMdError",
    "description_for",
    "name_for",
    "parse_skill_md",
    "render_skill_md",
]

MAX_NAME_CHARS = 64
"""Spec: `name` is 1 to 64 characters."""
MAX_DESCRIPTION_CHARS = 1024
"""Spec: `description` is 1 to 1024 characters."""
MAX_COMPATIBILITY_CHARS = 500
"""Spec: `compatibility`, when present, is 1 to 500 characters."""
MAX_FRONT_MATTER_CHARS = 64 * 1024
"""Largest front matter parsed; the spec's fields fit in a few kilobytes."""
RESERVED_WORDS = ("anthropic", "claude")
"""Words the Claude API refuses inside a skill `name`; exported names never contain them."""
MAX_SLUG_WORDS = 6
"""Words of the issue that follow the skill id in an exported name."""
MAX_SOURCES_SHOWN = 5
"""Source traces the provenance footer lists before saying how many more there are."""

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)
"""Spec: lowercase letters, digits and hyphens; no leading, trailing or consecutive hyphen."""
FOOTER_MARKER = "<!-- ace:provenance -->"
"""The line that starts our provenance footer; import drops it and everything after it."""
HARNESS_PLACEHOLDER = (
    "This harness skill records a runtime issue and holds no instruction yet: the description is the whole skill."
)
"""The body of an exported harness skill without insight; import reads it back as no insight."""

_ID_KEY, _SECTION_KEY, _KEYWORDS_KEY, _ISSUE_KEY = "ace-skill-id", "ace-section", "ace-keywords", "ace-issue"
_SKILL_ID = re.compile(rf"(?:context|harness)-[0-9]{{5,{MAX_ID_DIGITS}}}", re.ASCII)
_WHITESPACE = re.compile(r"\s+")


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, refusing a key given twice (PyYAML would silently keep the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()  # a set: one pass, whatever the number of keys
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str):
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class SkillMdError(SkillbookError):
    """A SKILL.md cannot be read as a skill, or a skill cannot be written as one. The message is one
    line and names the file."""


@dataclass(frozen=True, slots=True)
class ParsedSkillMd:
    """What a SKILL.md says, in skillbook terms."""

    name: str
    """The front matter's `name` (equal to its folder's name)."""
    issue: str
    """Ours: the issue as exported. Anyone's: the whole description (it says what and when)."""
    keywords: tuple[str, ...]
    """Ours: `metadata.ace-keywords`. Anyone's: the words of the name."""
    insight: str | None
    """The body without our provenance footer; None when empty or the harness placeholder."""
    section: Section | None
    """Ours: `metadata.ace-section`; None for anyone's (the importer chooses)."""
    skill_id: str | None
    """Ours: `metadata.ace-skill-id`, the id the skill had where it was exported; None for anyone's."""


def name_for(skill: Skill) -> str:
    """`<skill id>-<up to 6 words of the issue>`, at most 64 characters: unique (ids are) and
    unchanged by anything but an edit of the issue."""
    name = skill.id
    words = re.findall(
        r"[a-z0-9]+", unicodedata.normalize("NFKD", skill.issue).encode("ascii", "ignore").decode().lower()
    )
    taken = 0
    for word in words:
        if taken == MAX_SLUG_WORDS or len(name) + 1 + len(word) > MAX_NAME_CHARS:
            break
        if any(reserved in word for reserved in RESERVED_WORDS):
            continue
        name, taken = f"{name}-{word}", taken + 1
    return name


def description_for(skill: Skill) -> tuple[str, bool]:
    """The description (the issue, then when to use it, at most 1024 characters, no angle brackets)
    and whether it holds the issue verbatim."""
    issue = _WHITESPACE.sub(" ", skill.issue).replace("<", "‹").replace(">", "›")
    when = _when_sentence(skill.keywords)
    budget = MAX_DESCRIPTION_CHARS - len(when) - 1
    if len(issue) > budget:
        cut = issue[: budget - 1]
        issue = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip() + "…"
    return f"{issue} {when}", issue == skill.issue


def _when_sentence(keywords: tuple[str, ...]) -> str:
    return "Use when a task involves: " + ", ".join(keyword.replace("_", " ") for keyword in keywords) + "."


def render_skill_md(skill: Skill) -> str:
    """The SKILL.md text of `skill` (see docs/integrations.md for the layout)."""
    description, verbatim = description_for(skill)
    metadata = {_ID_KEY: skill.id, _SECTION_KEY: skill.section, _KEYWORDS_KEY: " ".join(skill.keywords)}
    if not verbatim:
        metadata[_ISSUE_KEY] = skill.issue
    front = yaml.safe_dump(
        {"name": name_for(skill), "description": description, "metadata": metadata},
        sort_keys=False,
        allow_unicode=True,
        width=1 << 20,
    )
    body = skill.insight if skill.insight is not None else HARNESS_PLACEHOLDER
    return f"---\n{front}---\n\n{body}\n\n{_footer(skill)}"


def _footer(skill: Skill) -> str:
    uids = list(dict.fromkeys(_WHITESPACE.sub(" ", source.trace_uid) for source in skill.occurrences))
    shown = ", ".join(f"`{uid}`" for uid in uids[:MAX_SOURCES_SHOWN]) or "none recorded"
    more = f" and {len(uids) - MAX_SOURCES_SHOWN} more" if len(uids) > MAX_SOURCES_SHOWN else ""
    return (
        f"{FOOTER_MARKER}\n"
        f"_Learned by ace: skill `{skill.id}` ({skill.section}); used {skill.used_count}, "
        f"helpful {skill.helpful_count}, harmful {skill.harmful_count}, neutral {skill.neutral_count}._\n"
        f"_Source traces: {shown}{more}._\n"
    )


def parse_skill_md(text: str, folder_name: str, where: str) -> ParsedSkillMd:
    """Read a SKILL.md's text. `folder_name` is the folder it sits in; `where` names it in errors.

    Raises `SkillMdError` for invalid Unicode, a missing or unparsable front matter, and any
    front matter that breaks the spec (name, description, compatibility, metadata) or, for ours,
    carries a malformed `ace-` field.
    """
    try:
        check_text(text, where)
    except UntrustedInputError as exc:
        raise SkillMdError(str(exc)) from None
    text = text.removeprefix("\ufeff")
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise SkillMdError(
            f"{where}: no front matter (the file must start with a '---' line and close it with another)"
        )
    raw = match.group(1) or ""
    if len(raw) > MAX_FRONT_MATTER_CHARS:
        raise SkillMdError(f"{where}: front matter longer than {MAX_FRONT_MATTER_CHARS} characters")
    try:
        front = yaml.load(raw, Loader=_Loader)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:  # ValueError: a bad date
        raise SkillMdError(f"{where}: front matter is not valid YAML ({_one_line(str(exc))})") from None
    if not isinstance(front, dict):
        raise SkillMdError(f"{where}: front matter must be a YAML mapping, got {quote(front)}")
    check_front_matter(front, folder_name, where)
    metadata = front.get("metadata") or {}
    body = text[match.end() :]
    above = body.rpartition(f"\n{FOOTER_MARKER}\n")[0] if f"\n{FOOTER_MARKER}\n" in body else body
    insight = above.strip() or None
    if _ID_KEY not in metadata:
        return ParsedSkillMd(
            name=front["name"],
            issue=front["description"].strip(),
            keywords=tuple(front["name"].split("-")),
            insight=insight,
            section=None,
            skill_id=None,
        )
    return _ours(front, metadata, insight, where)


def _ours(front: Mapping[str, Any], metadata: Mapping[str, str], insight: str | None, where: str) -> ParsedSkillMd:
    skill_id, section = metadata[_ID_KEY], metadata.get(_SECTION_KEY)
    if section not in VALID_SECTIONS or not _SKILL_ID.fullmatch(skill_id) or not skill_id.startswith(f"{section}-"):
        raise SkillMdError(
            f"{where}: metadata {_ID_KEY} {quote(skill_id)} and {_SECTION_KEY} {quote(section)} must be a skill id "
            "like 'context-00001' and its section"
        )
    keywords = tuple(metadata.get(_KEYWORDS_KEY, "").split())  # normalised keywords hold no whitespace
    if not keywords:
        raise SkillMdError(f"{where}: metadata {_KEYWORDS_KEY} must list keywords separated by spaces")
    issue = metadata.get(_ISSUE_KEY)
    if issue is None:
        issue = front["description"].strip().removesuffix(_when_sentence(keywords)).strip()
    if section == "harness" and insight == HARNESS_PLACEHOLDER:
        insight = None
    checked_section = cast(Section, section)  # checked against VALID_SECTIONS above
    return ParsedSkillMd(
        name=front["name"],
        issue=issue,
        keywords=keywords,
        insight=insight,
        section=checked_section,
        skill_id=skill_id,
    )


def check_front_matter(front: Mapping[str, Any], folder_name: str, where: str) -> None:
    """Raise `SkillMdError` unless `front` satisfies the Agent Skills spec: `name` 1-64 lowercase
    letters, digits and single inner hyphens, equal to `folder_name`; `description` a non-empty
    string of at most 1024 characters; `compatibility` (if any) 1-500 characters; `metadata` (if
    any) a map of strings to strings. Other fields are allowed and ignored."""
    name, description = front.get("name"), front.get("description")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME_CHARS:
        raise SkillMdError(
            f"{where}: name must be 1-{MAX_NAME_CHARS} lowercase letters, digits and single hyphens "
            f"(not first or last), got {quote(name)}"
        )
    if name != folder_name:
        raise SkillMdError(f"{where}: name {quote(name)} must equal its folder's name {quote(folder_name)}")
    if not isinstance(description, str) or not description.strip() or len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillMdError(
            f"{where}: description must be a non-empty string of at most {MAX_DESCRIPTION_CHARS} characters, "
            f"got {quote(description, 80)} ({len(description) if isinstance(description, str) else 0} characters)"
        )
    compatibility = front.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or not 1 <= len(compatibility) <= MAX_COMPATIBILITY_CHARS
    ):
        raise SkillMdError(
            f"{where}: compatibility must be 1-{MAX_COMPATIBILITY_CHARS} characters, got {quote(compatibility, 80)}"
        )
    metadata = front.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise SkillMdError(f"{where}: metadata must map strings to strings, got {quote(metadata, 80)}")
    for value in (description, *((metadata or {}).values())):
        try:  # YAML's "\ud800" escapes can produce lone surrogates, which no skillbook can save
            check_text(value, where)
        except UntrustedInputError as exc:
            raise SkillMdError(str(exc)) from None


def _one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()
