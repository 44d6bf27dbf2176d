"""report.html from report data: escaped text, no script, no remote load, the learning curve's figures."""

from __future__ import annotations

import re
from typing import Any

from ace_eval.e2e.report_html import learning_curve, render_report_html

HOSTILE = '<script>alert("issue")</script><img src=x onerror=alert(1)>'


def _metrics(pass1: float) -> dict[str, Any]:
    return {
        "num_tasks": 4,
        "num_simulations": 4,
        "average_reward": pass1,
        "pass_hat_k": {"1": pass1},
        "ci95": {"1": [max(0.0, pass1 - 0.25), min(1.0, pass1 + 0.25)]},
        "per_task": [],
    }


def _outcome(epoch: int, status: str, reward: float | None, operations: list[str]) -> dict[str, Any]:
    return {"epoch": epoch, "status": status, "reward": reward, "operations": operations}


def _report(**changes: Any) -> dict[str, Any]:
    report = {
        "plumbing_only": False,
        "exit_status": 0,
        "failures": [],
        "verify_problems": [],
        "skills": 1,
        "traces": 4,
        "traces_learned": 3,
        "traces_nothing_learned": 1,
        "config": {"skill_injection": "matched", "agent_model": "openai/gpt-4.1-mini"},
        "versions": {"python": "3.11"},
        "learning": [
            _outcome(1, "learned", 0.0, ["ADD context-00001"]),
            _outcome(1, "learned", 1.0, ["TAG context-00001 +1"]),
            _outcome(2, "nothing learned", 1.0, []),
            _outcome(2, "learned", None, ["ADD context-00002"]),
        ],
        "benchmark": {
            "baseline": _metrics(0.25),
            "with_skills": _metrics(0.5),
            "difference": 0.25,
            "difference_ci95": [0.0, 0.5],
            "newly_passing": [{"task_id": "3", "trials": 1, "baseline_successes": 0, "with_skills_successes": 1}],
            "newly_failing": [],
            "baseline_failures": [],
            "with_skills_failures": [],
        },
        "skills_attribution": [
            {
                "id": "context-00001",
                "active": True,
                "section": "context",
                "issue": HOSTILE,
                "keywords": ["a"],
                "injected_in_training": 1,
                "injected_in_benchmark": 2,
                "benchmark_pass_rate_injected": 1.0,
                "benchmark_pass_rate_not_injected": 0.5,
                "used_count": 3,
                "helpful_count": 1,
                "harmful_count": 0,
                "neutral_count": 0,
                "learned_from": ["tau2:a"],
            }
        ],
        "phases": [
            {
                "name": "learning",
                "seconds": 2.5,
                "usage": {"agent": {"requests": 3, "input_tokens": 100, "output_tokens": 10, "cost_usd": None}},
            }
        ],
    }
    report.update(changes)
    return report


def test_skill_text_is_escaped_and_nothing_can_run_or_load():
    html = render_report_html(_report(), run_name="run_<b>x</b>")

    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert "&lt;script&gt;alert(&#34;issue&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "run_&lt;b&gt;x&lt;/b&gt;" in html
    assert re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', html) == []
    assert "default-src 'none'" in html


def test_the_plumbing_notice_comes_first_when_a_role_was_scripted():
    html = render_report_html(_report(plumbing_only=True), run_name="r")

    assert html.index("Plumbing only") < html.index("Benchmark (paired)")
    assert "Plumbing only" not in render_report_html(_report(), run_name="r")


def test_a_run_without_benchmark_still_renders():
    html = render_report_html(_report(benchmark=None, skills_attribution=[], phases=[]), run_name="r")

    assert "No benchmark ran" in html and "The skillbook has no skill" in html


def test_learning_curve_counts_per_epoch():
    curve = learning_curve(_report()["learning"])

    assert curve == [
        {
            "epoch": 1,
            "samples": 2,
            "graded": 2,
            "pass_rate": 0.5,
            "learned": 2,
            "nothing": 0,
            "failed": 0,
            "added": 1,
            "added_so_far": 1,
        },
        {
            "epoch": 2,
            "samples": 2,
            "graded": 1,
            "pass_rate": 1.0,
            "learned": 1,
            "nothing": 1,
            "failed": 0,
            "added": 1,
            "added_so_far": 2,
        },
    ]
