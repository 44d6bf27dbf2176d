"""`ace-eval bench`'s report.html opened from disk in a real browser: nothing loaded from the network,
one row per arm, paired difference and answer, accessible, and readable on a phone."""

from __future__ import annotations

import json
from pathlib import Path

from .serving import PHONE, screenshot


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
