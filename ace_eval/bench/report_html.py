"""report.html of an `ace-eval bench` run: the figures of report.json for people, self-contained.

Rendered from `report.report_dict` data: the plumbing-only notice first, the issue's targets, each
arm's accuracy with its interval (chart and table), the paired differences with their intervals,
accuracy per item kind, the learned skills verbatim with their attribution, what each training
sample taught, every answer, and time and tokens per phase. Charts are pygal SVG inlined without
any script (`ace.server.ui.charts`), each beside a table of its numbers; all text is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ace.server.ui.charts import chart_svg, new_chart
from ace_eval.html_report import phase_rows, phases_chart, report_environment

__all__ = ["render_bench_report_html"]


def render_bench_report_html(data: Mapping[str, Any], *, run_name: str) -> str:
    """The HTML document of a bench run whose report data is `data` (what report.json holds)."""
    from markupsafe import Markup

    charts = {
        "arms": _arms_chart(data["scores"]),
        "differences": _differences_chart(data["differences"]),
        "phases": phases_chart(data["phases"]),
    }
    attribution = {row["id"]: row for row in data["attribution"]}
    kinds = sorted({kind for score in data["scores"].values() for kind in score["by_kind"]})
    learned_vs_none = next((d for d in data["differences"] if (d["arm"], d["baseline"]) == ("learned", "none")), None)
    return (
        report_environment()
        .get_template("bench_report.html")
        .render(
            run_name=run_name,
            r=data,
            kinds=kinds,
            headline=learned_vs_none,
            skills=[{**skill, **attribution[skill["id"]]} for skill in data["skills"]],
            phases=phase_rows(data["phases"]),
            charts={name: Markup(svg) if svg else None for name, svg in charts.items()},
        )
    )


def _arms_chart(scores: Mapping[str, Mapping[str, Any]]) -> str | None:
    if not scores:
        return None
    chart = new_chart(
        "Bar", range=(0, 1), show_legend=False, title="Accuracy per arm with 95% intervals (same test items)"
    )
    chart.x_labels = list(scores)
    chart.add(
        "accuracy",
        [{"value": s["accuracy"], "ci": {"low": s["ci95"][0], "high": s["ci95"][1]}} for s in scores.values()],
    )
    described = "; ".join(f"{arm} {s['accuracy']:.3f}" for arm, s in scores.items())
    return chart_svg(chart, f"Bar chart of accuracy per arm: {described}. The table lists every value.")


def _differences_chart(differences: Sequence[Mapping[str, Any]]) -> str | None:
    if not differences:
        return None
    chart = new_chart(
        "HorizontalBar",
        colors=("#0b5cad",),
        height=120 + 45 * len(differences),
        range=(-1, 1),
        show_legend=False,
        title="Paired differences in accuracy with 95% bootstrap intervals",
    )
    chart.x_labels = [f"{d['arm']} - {d['baseline']}" for d in differences]
    chart.add(
        "difference",
        [{"value": d["difference"], "ci": {"low": d["ci95"][0], "high": d["ci95"][1]}} for d in differences],
    )
    described = "; ".join(f"{d['arm']} - {d['baseline']} {d['difference']:+.3f}" for d in differences)
    return chart_svg(chart, f"Bar chart of the paired differences: {described}. The table lists every value.")
