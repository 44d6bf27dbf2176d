"""The skillbook page's query (filter, search, sort, pages) and a skill's tag history, in-process."""

from __future__ import annotations

import pytest

from ace.server.ui._history import counter_history
from ace.server.ui._listing import PAGE_SIZE, ListingCache, ListingQuery, SkillbookListing
from ace.skillbook import InsightSource, Skill, Skillbook

from .ui_skillbook import HISTORY_SKILL, build_ui_skillbook


def _skillbook(count: int) -> Skillbook:
    skillbook = Skillbook()
    for number in range(count):
        skillbook.add_skill("context", f"Issue number {number} about refunds", ["refunds"], insight="Do it.")
    return skillbook


def _no_search(text: str, section: str) -> list[Skill]:
    raise AssertionError("no search expected")


def test_pages_cut_the_list_and_a_page_past_the_end_shows_the_last():
    listing = SkillbookListing(_skillbook(PAGE_SIZE * 2 + 20))

    third = listing.page(ListingQuery(page=3), _no_search)
    beyond = listing.page(ListingQuery(page=99), _no_search)

    assert (third.total, third.pages, third.page, third.first, len(third.skills)) == (120, 3, 3, 101, 20)
    assert third.skills[0].id == "context-00101"
    assert beyond.page == 3 and beyond.skills == third.skills


def test_counter_sorts_put_the_most_first_and_break_ties_by_id():
    skillbook = _skillbook(4)
    for skill_id, times in (("context-00003", 2), ("context-00002", 2), ("context-00004", 1)):
        for _ in range(times):
            skillbook.tag_skill(skill_id, -1)

    page = SkillbookListing(skillbook).page(ListingQuery(sort="harmful"), _no_search)

    assert [s.id for s in page.skills] == ["context-00002", "context-00003", "context-00004", "context-00001"]
    assert page.counter_max["harmful"] == 2


def test_last_change_sort_puts_the_latest_first():
    skillbook = _skillbook(3)
    skillbook.update_skill("context-00002", insight="Changed.")

    page = SkillbookListing(skillbook).page(ListingQuery(sort="updated"), _no_search)

    assert page.skills[0].id == "context-00002"


def test_search_ranks_active_skills_and_finds_inactive_ones_by_every_word():
    skillbook = build_ui_skillbook()
    seen: list[tuple[str, str]] = []

    def search(text: str, section: str) -> list[Skill]:
        seen.append((text, section))
        return [skillbook.get_skill("context-00002")]  # type: ignore[list-item]

    listing = SkillbookListing(skillbook)
    found = listing.page(ListingQuery(status="all", text="helm upgrade"), search)
    inactive_only = listing.page(ListingQuery(status="inactive", text="helm nothing-like-this"), search)

    assert [s.id for s in found.skills] == ["context-00002", "context-00007"]
    assert seen == [("helm upgrade", "all")]
    assert inactive_only.total == 0


def test_the_cache_keeps_a_listing_until_the_skillbook_changes():
    skillbook = _skillbook(2)
    cache = ListingCache()
    first = cache.listing_for(skillbook)

    assert cache.listing_for(skillbook) is first
    skillbook.tag_skill("context-00001", 1)
    assert cache.listing_for(skillbook) is not first
    assert cache.listing_for(skillbook).counter_max["helpful"] == 1


def test_counter_history_follows_the_tag_occurrences_in_order():
    history = counter_history(build_ui_skillbook().get_skill(HISTORY_SKILL))  # type: ignore[arg-type]

    assert [(p.label, p.helpful, p.harmful, p.neutral) for p in history] == [
        ("epoch 2 step 1", 1, 0, 0),
        ("epoch 2 step 4", 1, 1, 0),
        ("epoch 2 step 9", 2, 1, 0),
    ]
    assert [p.position for p in history] == [3, 4, 5]


@pytest.mark.parametrize(
    ("learning_text", "outcome"), [("tagged neutral", "neutral"), (None, "unknown"), ("looked fine", "unknown")]
)
def test_a_tag_whose_text_names_no_outcome_counts_as_unknown(learning_text, outcome):
    skillbook = _skillbook(1)
    skillbook.tag_skill(
        "context-00001",
        0,
        insight_source=InsightSource(source_system="manual", trace_id="x", learning_text=learning_text),
    )

    [point] = counter_history(skillbook.get_skill("context-00001"))  # type: ignore[arg-type]

    assert (point.neutral, point.unknown) == ((1, 0) if outcome == "neutral" else (0, 1))
    assert point.label == "#2"


def test_nearest_skills_are_same_section_active_skills_and_twins_are_duplicates():
    from ace.retrieval import default_embedder
    from ace.server.ui._neighbours import NearestSkills

    skillbook = build_ui_skillbook()
    nearest = NearestSkills(default_embedder())

    [twin] = nearest.nearest(skillbook, skillbook.get_skill("harness-00001"))  # type: ignore[arg-type]
    of_inactive = nearest.nearest(skillbook, skillbook.get_skill("context-00007"), limit=3)  # type: ignore[arg-type]

    assert (twin.skill.id, twin.duplicate) == ("harness-00002", True) and twin.similarity == pytest.approx(1.0)
    assert len(of_inactive) == 3
    assert all(n.skill.active and n.skill.section == "context" and not n.duplicate for n in of_inactive)
    assert [n.similarity for n in of_inactive] == sorted((n.similarity for n in of_inactive), reverse=True)
    assert "context-00001" in [n.skill.id for n in of_inactive]  # the other Kubernetes skill
