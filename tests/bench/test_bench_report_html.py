"""A bench run's report.html: written beside report.md, escaped, nothing to run or load, and the
figures of report.json in it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ace_eval.bench.report_html import render_bench_report_html
from ace_eval.cli import main

HOSTILE = '<script>alert("skill")</script><img src=x onerror=alert(1)>'


def _run(tmp_path: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
    out = tmp_path / "run"
    argv = ["bench", "conventions", "--output-dir", str(out), "--train-limit", "6", "--test-limit", "6", *extra]
    main(argv)
    return out, json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_every_bench_run_writes_a_self_contained_report_html(tmp_path: Path) -> None:
    out, data = _run(tmp_path)

    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', html) == []
    assert "default-src 'none'" in html
    assert html.index("Plumbing only") < html.index("Targets")
    for arm in data["arms"]:
        assert f'<tr data-arm="{arm}">' in html
    for difference in data["differences"]:
        assert f'<tr data-pair="{difference["arm"]}-{difference["baseline"]}">' in html
    for row in data["per_item"]:
        assert f'<tr data-item-id="{row["id"]}">' in html


def test_skill_text_and_answers_are_escaped(tmp_path: Path) -> None:
    _, data = _run(tmp_path)
    data["skills"] = [
        {"id": "context-00001", "section": "context", "issue": HOSTILE, "insight": HOSTILE, "keywords": ["a"]}
    ]
    data["attribution"] = [
        {
            "id": "context-00001",
            "injected": 1,
            "accuracy_injected": 1.0,
            "accuracy_not_injected": None,
            "injected_by_kind": {"control": 1},
        }
    ]
    data["per_item"][0]["answers"]["learned"][0]["answer"] = HOSTILE

    html = render_bench_report_html(data, run_name="run_<b>x</b>")

    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert html.count("&lt;script&gt;alert(&#34;skill&#34;)&lt;/script&gt;") == 3
    assert "run_&lt;b&gt;x&lt;/b&gt;" in html
    assert '<tr data-skill-id="context-00001">' in html and "control x1" in html


def test_retired_lessons_are_listed_escaped(tmp_path: Path) -> None:
    _, data = _run(tmp_path)
    assert data["retired"] == [] and 'class="retired"' not in render_bench_report_html(data, run_name="r")
    data["retired"] = [
        {"id": "context-00002", "issue": HOSTILE, "insight": "deny", "backed_by": ["ace:train-1"], "reason": "r"}
    ]

    html = render_bench_report_html(data, run_name="r")

    assert "<script" not in html.lower()
    assert '<li data-skill-id="context-00002">' in html and "(backed by ace:train-1)" in html


def test_the_targets_say_met_or_not_and_the_headline_reads_learned_minus_none(tmp_path: Path) -> None:
    _, data = _run(tmp_path)
    data["targets"]["learned_beats_none"]["met"] = True
    data["targets"]["learned_matches_icl_with_fewer_tokens"]["met"] = False
    data["targets"]["control_harm_at_most_2_percent"] = None
    data["differences"][0].update(arm="learned", baseline="none", difference=0.25, ci95=[0.05, 0.45], mcnemar_p=0.03)

    html = render_bench_report_html(data, run_name="r")

    targets = dict(re.findall(r'<li data-target="(\w+)">[^:]+: <span class="(\w+)">', html))
    assert targets["learned_beats_none"] == "met"
    assert targets["learned_matches_icl_with_fewer_tokens"] == "missed"
    assert targets["control_harm_at_most_2_percent"] == "muted"  # not run
    assert "learned - none: <strong>+0.250</strong>, paired 95% CI [+0.050, +0.450], exact McNemar p = 0.03" in html
    assert "the interval includes 0" not in html


def test_a_run_that_learned_nothing_and_scored_only_none_renders(tmp_path: Path) -> None:
    out, data = _run(tmp_path, "--arms", "none")

    html = (out / "report.html").read_text(encoding="utf-8")
    assert data["differences"] == [] and data["skills"] == []
    assert "No skill was learned" in html and '<tr data-arm="none">' in html
    assert 'id="learned-none"' not in html


def test_the_harm_target_names_the_broken_controls_that_got_no_skill(tmp_path: Path) -> None:
    _, data = _run(tmp_path)
    harm = data["targets"]["control_harm_at_most_2_percent"]
    harm.update(
        met=False,
        broken=2,
        control_pairs=20,
        broken_with_no_skill_injected=1,
        note="2 of 20 broken, 1 of them with no skill injected: the prompt of the none arm, answered differently",
    )

    html = render_bench_report_html(data, run_name="r")

    assert "2 of 20 broken, 1 of them with no skill injected: the prompt of the none arm" in html
