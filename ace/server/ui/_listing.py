"""The skillbook page's query: filter by status and section, find by text, sort, and cut one page.

Orders are computed once per skillbook state (the Skillbook object and its `version`) and per
(status, section, sort) and then reused, so a page at 5,000 skills costs a slice, not a sort.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, get_args

from ace.skillbook import COUNTERS as SKILL_COUNTERS
from ace.skillbook import SECTIONS, Skill, Skillbook, skill_id_order

__all__ = [
    "COUNTERS",
    "PAGE_SIZE",
    "SECTION_FILTERS",
    "SORT_KEYS",
    "STATUS_FILTERS",
    "ListingPage",
    "ListingQuery",
    "ListingCache",
    "SkillbookListing",
    "SortKey",
    "StatusFilter",
]

COUNTERS: tuple[tuple[str, str], ...] = tuple(
    (field.removesuffix("_count"), field) for field in sorted(SKILL_COUNTERS, key=lambda field: field == "used_count")
)
"""The skill's counters as (label, Skill field), in the order pages show them: the tag outcomes,
then `used`."""

SortKey = str
"""One of `SORT_KEYS`."""
SORT_KEYS: tuple[SortKey, ...] = ("id", *(label for label, _ in COUNTERS), "updated", "relevance")
"""What a listing sorts by: id order, a counter (most first), the last change, the search's relevance."""
StatusFilter = Literal["active", "inactive", "all"]
STATUS_FILTERS: tuple[str, ...] = get_args(StatusFilter)
SectionFilter = str
"""One of `SECTION_FILTERS`."""
SECTION_FILTERS: tuple[SectionFilter, ...] = ("all", *SECTIONS)
"""Every section, or one."""

PAGE_SIZE = 50
"""Skills per page."""


_FIELDS: dict[str, str] = dict(COUNTERS)


@dataclass(frozen=True, slots=True)
class ListingQuery:
    """What the skillbook page was asked for (already validated)."""

    status: StatusFilter = "active"
    """Which skills: active, inactive (soft-removed) or all."""
    section: SectionFilter = "all"
    """One section, or both."""
    sort: SortKey = "id"
    """The order: skill id, a counter or the last change (most first), or search relevance."""
    text: str = ""
    """Search text; empty lists every skill of the filter."""
    page: int = 1
    """1-based page number; a number past the last page shows the last page."""


@dataclass(frozen=True, slots=True)
class ListingPage:
    """One page of skills and what the page needs to draw them."""

    skills: tuple[Skill, ...]
    """The skills of this page, in order."""
    total: int
    """Skills that pass the filter (and the search) on all pages."""
    page: int
    """This page's number (1-based)."""
    pages: int
    """Number of pages (at least 1)."""
    first: int
    """1-based position of this page's first skill in the whole list (0 when the list is empty)."""
    counter_max: dict[str, int]
    """Per counter label, its largest value over the whole skillbook (bars are drawn against it)."""


class SkillbookListing:
    """The skills of one skillbook state, with orders computed on first use and kept."""

    def __init__(self, skillbook: Skillbook) -> None:
        self.skillbook = skillbook
        """The skillbook this listing was made from."""
        self.version = skillbook.version
        """Its version at that time."""
        self._skills = skillbook.skills(include_inactive=True)
        self.counter_max = {
            label: max((getattr(skill, field) for skill in self._skills), default=0) for label, field in COUNTERS
        }
        """Per counter label, the largest value over all skills."""
        active = [skill for skill in self._skills if skill.active]
        self.totals = {
            "all": len(self._skills),
            "active": len(active),
            "inactive": len(self._skills) - len(active),
            "context": sum(1 for skill in active if skill.section == "context"),
            "harness": sum(1 for skill in active if skill.section == "harness"),
        }
        """Skill counts: all, active, inactive, and active ones per section."""
        self._orders: dict[tuple[str, str, str], list[Skill]] = {}
        self._lock = threading.Lock()

    def page(self, query: ListingQuery, search: Callable[[str, str], Sequence[Skill]]) -> ListingPage:
        """The page `query` asks for. `search(text, section)` ranks the active skills for a text
        (best first); inactive skills are found when every word of the text is in their issue,
        insight or keywords."""
        if query.text:
            ordered = self._found(query, search)
        else:
            ordered = self._ordered(query.status, query.section, query.sort)
        pages = max(1, math.ceil(len(ordered) / PAGE_SIZE))
        page = min(query.page, pages)
        start = (page - 1) * PAGE_SIZE
        return ListingPage(
            skills=tuple(ordered[start : start + PAGE_SIZE]),
            total=len(ordered),
            page=page,
            pages=pages,
            first=start + 1 if ordered else 0,
            counter_max=self.counter_max,
        )

    def _ordered(self, status: str, section: str, sort: str) -> list[Skill]:
        key = (status, section, "id" if sort == "relevance" else sort)
        ordered = self._orders.get(key)
        if ordered is None:
            with self._lock:
                ordered = self._orders.get(key)
                if ordered is None:
                    ordered = self._orders[key] = _sorted(
                        [s for s in self._skills if _passes(s, status, section)], key[2]
                    )
        return ordered

    def _found(self, query: ListingQuery, search: Callable[[str, str], Sequence[Skill]]) -> list[Skill]:
        found: list[Skill] = []
        if query.status != "inactive":
            found += search(query.text, query.section)
        if query.status != "active":
            words = query.text.casefold().split()
            found += [
                skill
                for skill in self._ordered("inactive", query.section, "id")
                if all(word in _haystack(skill) for word in words)
            ]
        return found if query.sort == "relevance" else _sorted(found, query.sort)


class ListingCache:
    """Keeps the listing of the skillbook state served last (one per app)."""

    def __init__(self) -> None:
        self._latest: SkillbookListing | None = None
        self._lock = threading.Lock()

    def listing_for(self, skillbook: Skillbook) -> SkillbookListing:
        """The listing of `skillbook` as it is now: the kept one when neither the object nor its
        version changed since, else a new one (which is kept instead)."""
        latest = self._latest
        if latest is not None and latest.skillbook is skillbook and latest.version == skillbook.version:
            return latest
        with self._lock:
            latest = self._latest
            if latest is None or latest.skillbook is not skillbook or latest.version != skillbook.version:
                latest = self._latest = SkillbookListing(skillbook)
            return latest


def _passes(skill: Skill, status: str, section: str) -> bool:
    if status != "all" and skill.active != (status == "active"):
        return False
    return section == "all" or skill.section == section


def _sorted(skills: list[Skill], sort: str) -> list[Skill]:
    by_id = sorted(skills, key=lambda s: skill_id_order(s.id))
    if sort == "id":
        return by_id
    # Most (or latest) first; equal values keep id order (the sort is stable).
    if sort == "updated":
        return sorted(by_id, key=lambda s: _instant(s.updated_at), reverse=True)
    field = _FIELDS[sort]
    return sorted(by_id, key=lambda s: getattr(s, field), reverse=True)


def _instant(timestamp: str) -> datetime:
    """An ISO-8601 timestamp as an aware datetime (a naive one, from an older file, is read as UTC)."""
    moment = datetime.fromisoformat(timestamp)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _haystack(skill: Skill) -> str:
    return " ".join((skill.issue, skill.insight or "", *skill.keywords)).casefold()
