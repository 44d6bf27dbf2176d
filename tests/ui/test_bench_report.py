"""`ace-eval bench`'s report.html opened from disk in a real browser: nothing loaded from the network,
one row per arm, paired difference and answer, accessible, and readable on a phone."""

from __future__ import annotations

import json
from pathlib import Path

from .serving import PHONE, screenshot, start_server, stop_server


def test_bench_report_opens_from_disk_without_any_network_request(page, bench_run: Path) -> None:
    report = bench_run / "report.html"
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    page.goto(report.as_uri())
    screenshot(page, "bench_report")

    assert requests == [report.as_uri()]
    data = json.loads((bench_run / "report.json").read_text())
    arms = page.locator("table.arms tbody tr").evaluate_all("rows => rows.map(r => r.dataset.arm)")
    assert arms == data["arms"]
    pairs = page.locator("table.differences tbody tr").evaluate_all("rows => rows.map(r => r.dataset.pair)")
    assert pairs == [f"{d['arm']}-{d['baseline']}" for d in data["differences"]]
    assert page.locator("table.answers tbody tr").count() == data["items"]["test"]
    assert page.locator("table.skills tbody tr").count() == len(data["skills"]) > 0
    assert page.locator(".notice").inner_text().startswith("Plumbing only")
    assert page.locator("svg[role=img]").count() == 3
    assert page.locator("script").count() == 0


def test_bench_report_passes_axe_and_fits_a_phone(browser, bench_run: Path) -> None:
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport=PHONE, is_mobile=True)
    try:
        phone = context.new_page()
        phone.goto((bench_run / "report.html").as_uri())
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        results = Axe().run(phone)
        assert results.violations_count == 0, results.generate_report()
    finally:
        context.close()


def test_the_runs_page_lists_a_bench_run_with_its_arms_and_serves_its_report(page, bench_run: Path) -> None:
    running = start_server(bench_run / "skillbook.json", "--runs", ".", cwd=bench_run.parent)
    try:
        page.goto(f"{running.url}/ui/runs")

        row = page.locator(f'tr[data-run="{bench_run.name}"]')
        summary = json.loads((bench_run / "summary.json").read_text())
        assert summary["baseline"]["arm"] == "none" and summary["with_skills"]["arm"] == "learned"
        cells = row.locator("td").all_inner_texts()
        accuracy = json.loads((bench_run / "report.json").read_text())["scores"]["none"]["accuracy"]
        assert cells[1] == "bench" and cells[4] == f"{accuracy:.3f}" and f"{summary['difference']:+.3f}" in cells[6]
        row.get_by_role("link", name=bench_run.name).click()
        page.wait_for_url(f"{running.url}/ui/runs/{bench_run.name}")
        assert page.locator("h1").inner_text() == f"ace-eval bench run {bench_run.name}"
    finally:
        stop_server(running)
