"""The Jinja environment of the self-contained report.html files (`ace-eval e2e` and `ace-eval bench`).

Templates live in `ace_eval/templates` and extend `report_base.html`: one stylesheet inline, a
Content-Security-Policy that forbids scripts and every network load, so a report opens from disk
with nothing to fetch. Every value is autoescaped (skill text and answers are untrusted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ace.server.ui.charts import chart_svg, new_chart

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["phase_rows", "phases_chart", "report_environment"]


def report_environment() -> Environment:
    """A strict, autoescaping environment over the report templates, with the filters `rate`
    (three decimals, "-" for None) and `signed` (three decimals with a sign)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("ace_eval", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["rate"] = lambda value: "-" if value is None else f"{value:.3f}"
    env.filters["signed"] = lambda value: f"{value:+.3f}"
    return env


def phases_chart(phases: Sequence[Mapping[str, Any]]) -> str | None:
    """A bar chart of each phase's wall time (`PhaseRecord.to_dict()` rows), or None for no phase."""
    if not phases:
        return None
    chart = new_chart(
        "HorizontalBar",
        colors=("#0b5cad",),
        height=120 + 40 * len(phases),
        show_legend=False,
        title="Wall time per phase (seconds)",
    )
    chart.x_labels = [phase["name"] for phase in phases]
    chart.add("seconds", [phase["seconds"] for phase in phases])
    return chart_svg(chart, "Bar chart of the wall time of each phase. The table lists every value.")


def phase_rows(phases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per phase: its name, seconds and per-role usage, with request and token totals and the total
    cost (None when any role's cost is unknown)."""
    rows = []
    for phase in phases:
        usage = phase.get("usage", {})
        totals = {
            key: sum(role.get(key) or 0 for role in usage.values())
            for key in ("requests", "input_tokens", "output_tokens")
        }
        costs = [role.get("cost_usd") for role in usage.values()]
        cost = None if not costs or any(c is None for c in costs) else sum(costs)
        rows.append({"name": phase["name"], "seconds": phase["seconds"], "roles": usage, "cost": cost, **totals})
    return rows
