"""pygal charts as SVG that is safe to inline or serve: no script, labelled for assistive technology.

pygal always writes a `<script>` holding its tooltip config (and, by default, a link to its
tooltip script on a CDN); both are dropped here, so a chart loads nothing and runs nothing. Used by
the `ace serve` UI and by `ace-eval e2e`'s self-contained report.html.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CHART_COLORS", "chart_svg", "new_chart"]

CHART_COLORS = ("#0b5cad", "#b35900", "#1a7f37", "#cf222e", "#57606a", "#8250df")
"""Series colours, each with a contrast of at least 4.5:1 on white."""


def _style(colors: tuple[str, ...]) -> Any:
    from pygal.style import Style

    return Style(
        background="#ffffff",
        plot_background="#ffffff",
        foreground="#1f2328",
        foreground_strong="#1f2328",
        foreground_subtle="#57606a",
        colors=colors,
        font_family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
        label_font_size=13,
        major_label_font_size=13,
        legend_font_size=14,
        title_font_size=16,
        value_font_size=13,
        tooltip_font_size=13,
    )


def new_chart(kind: str, *, colors: tuple[str, ...] = CHART_COLORS, **config: Any) -> Any:
    """A pygal chart of `kind` (e.g. "Line", "Bar", "HorizontalBar") with the shared style (series
    in `colors`, in order), no tooltip script and a size of 720 x 300 unless `config` says otherwise."""
    import pygal

    settings: dict[str, Any] = {
        "style": _style(colors),
        "js": [],
        "width": 720,
        "height": 300,
        "disable_xml_declaration": True,
    }
    settings.update(config)
    return getattr(pygal, kind)(**settings)


def chart_svg(chart: Any, label: str) -> str:
    """`chart` rendered as an `<svg>` element with `role="img"` and `aria-label` = `label`, and
    without any `<script>` element."""
    from pygal.etree import etree  # lxml's or the standard library's, whichever pygal builds with

    root = chart.render_tree()
    for parent in root.iter():
        for child in list(parent):
            if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    root.set("role", "img")
    root.set("aria-label", label)
    return str(etree.tostring(root, encoding="unicode"))
