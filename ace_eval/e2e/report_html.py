"""`report.html`: the run's report for people, self-contained (opens from disk with no network).

Rendered from the data of `report.json` (`report.report_dict`): the plumbing-only notice first,
then the paired benchmark (pass^k of both arms with their bootstrap intervals, the difference with
its paired interval), a learning curve per epoch, per-skill attribution, and time / tokens / cost
per phase. Charts are pygal SVG inlined without any script (`ace.server.ui.charts`); every chart has
a table with its numbers beside it. All text is escaped (skill text is untrusted); a
Content-Security-Policy meta tag forbids scripts and every network load.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ace.server.ui.charts import chart_svg, new_chart
from ace_eval.html_report import phase_rows, phases_chart, report_environment
from ace_eval.tau2.metrics import is_success

__all__ = ["learning_curve", "render_report_html"]

_ARM_COLORS = ("#57606a", "#0b5cad")
_ATTRIBUTION_CHART_SKILLS = 30


def render_report_html(full: Mapping[str, Any], *, run_name: str) -> str:
    """The HTML document of a run whose report data is `full` (what report.json holds)."""
    from markupsafe import Markup

    benchmark = full.get("benchmark")
    curve = learning_curve(full.get("learning", ()))
    attribution = full.get("skills_attribution", [])
    charts = {
        "pass_k": _pass_k_chart(benchmark) if benchmark else None,
        "difference": _difference_chart(benchmark) if benchmark else None,
        "curve": _curve_chart(curve) if curve else None,
        "attribution": _attribution_chart(attribution),
        "phases": phases_chart(full.get("phases", [])),
    }
    return (
        report_environment()
        .get_template("e2e_report.html")
        .render(
            run_name=run_name,
            r=full,
            benchmark=benchmark,
            ks=sorted(benchmark["baseline"]["pass_hat_k"], key=int) if benchmark else [],
            curve=curve,
            attribution=attribution,
            phases=phase_rows(full.get("phases", [])),
            charts={name: Markup(svg) if svg else None for name, svg in charts.items()},
        )
    )


def learning_curve(learning: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per epoch, in order: samples, pass rate of the graded ones (None when none was graded),
    learned / nothing learned / failed counts, and skills added (that epoch and so far)."""
    epochs: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for outcome in learning:
        epochs[int(outcome["epoch"])].append(outcome)
    rows, added_so_far = [], 0
    for epoch in sorted(epochs):
        outcomes = epochs[epoch]
        graded = [o["reward"] for o in outcomes if o.get("reward") is not None]
        added = sum(1 for o in outcomes for op in o.get("operations", ()) if str(op).startswith("ADD "))
        added_so_far += added
        rows.append(
            {
                "epoch": epoch,
                "samples": len(outcomes),
                "graded": len(graded),
                "pass_rate": sum(is_success(r) for r in graded) / len(graded) if graded else None,
                "learned": sum(1 for o in outcomes if o["status"] == "learned"),
                "nothing": sum(1 for o in outcomes if o["status"] == "nothing learned"),
                "failed": sum(1 for o in outcomes if o["status"] == "failed"),
                "added": added,
                "added_so_far": added_so_far,
            }
        )
    return rows


def _pass_k_chart(benchmark: Mapping[str, Any]) -> str:
    ks = sorted(benchmark["baseline"]["pass_hat_k"], key=int)
    chart = new_chart(
        "Bar",
        colors=_ARM_COLORS,
        range=(0, 1),
        legend_at_bottom=True,
        title="pass^k per arm with 95% bootstrap intervals",
    )
    chart.x_labels = [f"pass^{k}" for k in ks]
    for arm, label in (("baseline", "baseline (no skills)"), ("with_skills", "with skills")):
        metrics = benchmark[arm]
        chart.add(
            label,
            [
                {"value": metrics["pass_hat_k"][k], "ci": {"low": metrics["ci95"][k][0], "high": metrics["ci95"][k][1]}}
                for k in ks
            ],
        )
    described = "; ".join(
        f"{label} pass^1 {benchmark[arm]['pass_hat_k']['1']:.3f}"
        for arm, label in (("baseline", "baseline"), ("with_skills", "with skills"))
    )
    return chart_svg(chart, f"Bar chart of pass^k for both arms: {described}. The table lists every value.")


def _difference_chart(benchmark: Mapping[str, Any]) -> str:
    low, high = benchmark["difference_ci95"]
    difference = benchmark["difference"]
    chart = new_chart(
        "HorizontalBar",
        colors=("#0b5cad",),
        height=160,
        range=(-1, 1),
        show_legend=False,
        title="pass^1 with skills minus baseline, paired 95% interval",
    )
    chart.x_labels = ["difference"]
    chart.add("difference", [{"value": difference, "ci": {"low": low, "high": high}}])
    return chart_svg(chart, f"Difference in pass^1 {difference:+.3f}, paired 95% interval [{low:+.3f}, {high:+.3f}]")


def _curve_chart(curve: Sequence[Mapping[str, Any]]) -> str:
    chart = new_chart(
        "Line", colors=("#0b5cad", "#1a7f37"), range=(0, 1), legend_at_bottom=True, title="Learning per epoch"
    )
    chart.x_labels = [f"epoch {row['epoch']}" for row in curve]
    chart.add("training pass rate", [row["pass_rate"] for row in curve])
    chart.add("share of traces learned from", [row["learned"] / row["samples"] for row in curve])
    rates = ", ".join(f"epoch {row['epoch']} {_rate(row['pass_rate'])}" for row in curve)
    return chart_svg(chart, f"Line chart of the training pass rate per epoch: {rates}. The table lists every value.")


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _attribution_chart(attribution: Sequence[Mapping[str, Any]]) -> str | None:
    rows = [row for row in attribution if row["injected_in_benchmark"]][:_ATTRIBUTION_CHART_SKILLS]
    if not rows:
        return None
    chart = new_chart(
        "HorizontalBar",
        colors=("#0b5cad", "#57606a"),
        range=(0, 1),
        legend_at_bottom=True,
        height=120 + 40 * len(rows),
        title="Benchmark pass rate when a skill was injected vs not",
    )
    chart.x_labels = [row["id"] for row in rows]
    chart.add("injected", [row["benchmark_pass_rate_injected"] for row in rows])
    chart.add("not injected", [row["benchmark_pass_rate_not_injected"] for row in rows])
    return chart_svg(
        chart,
        f"Bar chart of the benchmark pass rate with and without each of {len(rows)} injected "
        "skills. The attribution table lists every value.",
    )
