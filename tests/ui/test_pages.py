"""The read-only UI in a real browser against a real `ace serve`: what each page shows, escaping,
following the file, accessibility (axe-core), keyboard use and phone width."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from ace.skillbook import Skillbook

from .serving import PHONE, Server, screenshot, start_server, stop_server
from .ui_skillbook import (
    HISTORY_OPERATIONS,
    HISTORY_SKILL,
    HOSTILE_ISSUE,
    HOSTILE_SKILL,
    MATCHED_SKILL,
    MATCHING_TASK,
    build_ui_skillbook,
    write_ui_skillbook,
)

PAGES = ["/ui", "/ui?status=inactive", f"/ui/skills/{HISTORY_SKILL}", f"/ui/match?task={MATCHING_TASK}", "/ui/runs"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(write_ui_skillbook(tmp_path_factory.mktemp("ui")))
    yield running
    stop_server(running)


def _counters(card: Any) -> dict[str, int]:
    labels = card.locator(".counter dt").all_inner_texts()
    values = card.locator(".counter .count").all_inner_texts()
    return {label: int(value.replace(",", "")) for label, value in zip(labels, values)}


def test_skillbook_page_lists_the_active_skills_with_their_counters(page, server):
    page.goto(f"{server.url}/ui")
    screenshot(page, "skillbook")

    expected = {skill.id: skill for skill in build_ui_skillbook().skills()}
    cards = page.locator("li.skill")
    assert sorted(cards.evaluate_all("cards => cards.map(c => c.dataset.skillId)")) == sorted(expected)
    history = page.locator(f'li.skill[data-skill-id="{HISTORY_SKILL}"]')
    assert _counters(history) == {"helpful": 2, "harmful": 1, "neutral": 0, "used": 3}
    assert "basic_economy" in history.locator(".keywords").inner_text()
    assert page.locator("h1").inner_text() == "Skillbook"


def test_filters_sort_and_search_narrow_the_list(page, server):
    page.goto(f"{server.url}/ui?status=inactive")
    assert page.locator("li.skill").evaluate_all("cs => cs.map(c => c.dataset.skillId)") == [
        "context-00007",
        "context-00008",
    ]
    assert page.locator("li.skill .badge.inactive").count() == 2

    page.goto(f"{server.url}/ui?sort=helpful")
    assert page.locator("li.skill").first.get_attribute("data-skill-id") == HISTORY_SKILL

    page.goto(f"{server.url}/ui?section=harness")
    assert page.locator("li.skill").evaluate_all("cs => cs.map(c => c.dataset.skillId)") == [
        "harness-00001",
        "harness-00002",
    ]

    page.goto(f"{server.url}/ui?q=excel+serial+dates")
    assert page.locator("li.skill").first.get_attribute("data-skill-id") == "context-00004"


def test_skill_page_shows_text_counters_and_the_occurrences_in_order(page, server):
    page.goto(f"{server.url}/ui/skills/{HISTORY_SKILL}")
    screenshot(page, "skill", height=1700)

    assert page.locator("h1").inner_text().startswith(HISTORY_SKILL)
    assert "Check the insurance first" in page.locator("#skill-fields").inner_text()
    occurrences = page.locator("ol.timeline > li.occurrence")
    assert occurrences.evaluate_all("os => os.map(o => o.dataset.operation)") == HISTORY_OPERATIONS
    first = occurrences.nth(0).inner_text()
    assert "tau2:t-101" in first and "epoch 1 · step 2" in first and "primary" in first
    assert "agent: I have refunded your basic economy ticket." in occurrences.nth(0).locator("blockquote").inner_text()
    assert "supporting" in occurrences.nth(1).inner_text()
    assert [occurrences.nth(i).locator(".badge.op").inner_text() for i in (2, 3, 4)] == [
        "TAG helpful",
        "TAG harmful",
        "TAG helpful",
    ]
    chart = page.locator("img.chart")
    assert chart.evaluate("img => img.complete && img.naturalWidth > 0")
    assert "3 TAG occurrences" in chart.get_attribute("alt")
    assert page.locator("table.nearest tbody tr").count() >= 1
    assert page.locator("form[method=post]").count() == 0  # read-only: no edit is offered
    assert page.get_by_role("button", name=re.compile("Remove|Activate")).count() == 0


def test_match_playground_shows_matches_near_misses_and_the_floor(page, server):
    page.goto(f"{server.url}/ui/match")
    page.get_by_label("Task").fill(MATCHING_TASK)
    page.get_by_role("button", name="Match").click()
    page.wait_for_url(re.compile(r"task="))
    screenshot(page, "match", height=1100)

    assert "Floor 0.500" in page.locator(".floor").inner_text()
    matches = page.locator("li.result.match")
    assert matches.evaluate_all("ms => ms.map(m => m.dataset.skillId)") == [MATCHED_SKILL]
    assert float(matches.first.locator(".score").inner_text()) >= 0.5
    assert "matched on" in matches.first.inner_text()
    misses = page.locator("tr.miss")
    assert misses.count() >= 1
    assert all(float(score) < 0.5 for score in misses.locator("td.score").all_inner_texts())


def test_a_task_no_skill_applies_to_shows_why_with_near_misses(page, server):
    page.goto(f"{server.url}/ui/match?task=rates+computed+in+SQL+come+out+as+zero")

    assert page.locator("li.result.match").count() == 0
    assert "No skill applies" in page.locator("#matches-heading + p").inner_text()
    assert page.locator("tr.miss").first.get_attribute("data-skill-id") == "context-00003"


def test_skill_text_is_shown_as_text_never_run_as_markup(page, server):
    page.goto(f"{server.url}/ui/skills/{HOSTILE_SKILL}")

    assert page.locator(".prose").first.inner_text() == HOSTILE_ISSUE
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img:not(.chart)").count() == 0
    assert "<b>bold</b>" in page.locator("#skill-fields .keywords").inner_text()
    page.goto(f"{server.url}/ui?q=refund")
    assert page.evaluate("window.__pwned") is None


def test_a_skill_added_on_disk_appears_after_a_reload(page, server):
    page.goto(f"{server.url}/ui")
    assert page.locator('li.skill[data-skill-id="context-00011"]').count() == 0

    with Skillbook.locked(server.skillbook) as skillbook:
        skillbook.add_skill(
            "context",
            "Seat maps render blank for codeshare flights.",
            ["airline", "seat_map"],
            insight="Fetch the seat map from the operating carrier.",
        )
    page.reload()

    assert "Seat maps render blank" in page.locator('li.skill[data-skill-id="context-00011"]').inner_text()


def test_unknown_pages_and_bad_parameters_say_what_is_wrong(browser, server):
    page = browser.new_page()  # not the `page` fixture: the browser logs these statuses as errors
    try:
        response = page.goto(f"{server.url}/ui/skills/context-99999")
        assert response.status == 404 and "no skill 'context-99999'" in page.locator("[role=alert]").inner_text()

        response = page.goto(f"{server.url}/ui?sort=colour")
        assert response.status == 400
        assert "sort must be one of" in page.locator("[role=alert]").inner_text()
    finally:
        page.close()


@pytest.mark.parametrize("path", PAGES)
def test_every_page_passes_axe_accessibility_checks(page, server, path):
    from axe_playwright_python.sync_playwright import Axe

    page.goto(f"{server.url}{path}")
    results = Axe().run(page)

    assert results.violations_count == 0, results.generate_report()


@pytest.mark.parametrize("path", PAGES)
def test_every_page_fits_a_phone_screen_without_sideways_scrolling(browser, server, path):
    context = browser.new_context(viewport=PHONE, is_mobile=True)
    try:
        phone = context.new_page()
        phone.goto(f"{server.url}{path}")
        if path == "/ui":
            screenshot(phone, "skillbook_phone")
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert phone.locator("nav[aria-label=Main] a").count() == 3
    finally:
        context.close()


def test_the_keyboard_reaches_the_skip_link_the_navigation_and_the_search(page, server):
    page.goto(f"{server.url}/ui")

    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.focus("#q")
    page.keyboard.type("lockfile conflicts")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"q=lockfile"))
    assert page.locator("li.skill").first.get_attribute("data-skill-id") == "context-00002"


def test_pages_forbid_scripts_and_remote_loads(server):
    import httpx

    for path in PAGES:
        policy = httpx.get(f"{server.url}{path}").headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy, path
