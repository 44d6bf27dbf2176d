"""`ace-eval e2e`'s report.html opened from disk in a real browser (no network request, both rows,
the difference, one attribution row per injected skill), and `ace serve --runs DIR` listing it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .serving import PHONE, Server, screenshot, start_server, stop_server

RUN = "run_scripted"


@pytest.fixture(scope="module")
def server(scripted_run: Path) -> Iterator[Server]:
    work = scripted_run.parents[1]
    running = start_server(scripted_run / RUN / "skillbook.json", "--runs", "results/e2e", cwd=work)
    yield running
    stop_server(running)


def test_report_html_opens_from_disk_without_any_network_request(page, scripted_run):
    report = scripted_run / RUN / "report.html"
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    page.goto(report.as_uri())
    screenshot(page, "report")

    assert requests == [report.as_uri()]
    full = json.loads((scripted_run / RUN / "report.json").read_text())
    assert page.locator("table.arms tbody tr").evaluate_all("rows => rows.map(r => r.dataset.arm)") == [
        "baseline",
        "with_skills",
    ]
    low, high = full["difference_ci95"]
    assert f"{full['difference']:+.3f}" in page.locator("#difference").inner_text()
    assert f"[{low:+.3f}, {high:+.3f}]" in page.locator("#difference").inner_text()
    injected = {
        row["id"] for row in full["skills_attribution"] if row["injected_in_training"] or row["injected_in_benchmark"]
    }
    assert injected, "the scripted run injected no skill"
    rows = page.locator("table.attribution tbody tr").evaluate_all("rows => rows.map(r => r.dataset.skillId)")
    assert sorted(rows) == sorted(row["id"] for row in full["skills_attribution"])
    assert injected <= set(rows)
    assert page.locator(".notice").inner_text().startswith("Plumbing only")
    assert page.locator("svg[role=img]").count() >= 4
    assert page.locator("script").count() == 0


def test_report_html_passes_axe_and_fits_a_phone(browser, scripted_run):
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport=PHONE, is_mobile=True)
    try:
        phone = context.new_page()
        phone.goto((scripted_run / RUN / "report.html").as_uri())
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        results = Axe().run(phone)
        assert results.violations_count == 0, results.generate_report()
    finally:
        context.close()


def test_runs_page_lists_the_run_and_serves_its_report_sandboxed(page, server, scripted_run):
    page.goto(f"{server.url}/ui/runs")
    screenshot(page, "runs")

    row = page.locator(f'tr[data-run="{RUN}"]')
    summary = json.loads((scripted_run / RUN / "summary.json").read_text())
    assert f"{summary['difference']:+.3f}" in row.inner_text()
    assert "plumbing only" in row.inner_text()
    row.get_by_role("link", name=RUN).click()
    page.wait_for_url(f"{server.url}/ui/runs/{RUN}")
    assert page.locator("h1").inner_text() == f"ace-eval e2e run {RUN}"
    policy = httpx.get(f"{server.url}/ui/runs/{RUN}").headers["content-security-policy"]
    assert "sandbox" in policy and "default-src 'none'" in policy


def test_runs_outside_the_folder_or_by_path_are_not_served(server, scripted_run):
    for name in ("%2e%2e", "..%2f..%2fetc", "run_scripted%2f..%2f..", "%2e", "nope"):
        response = httpx.get(f"{server.url}/ui/runs/{name}")
        assert response.status_code == 404, name
        assert "<html" in response.text and "root:" not in response.text
