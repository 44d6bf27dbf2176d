"""HTML responses of the UI: Jinja2 templates shipped in the package, escaping everything they
show, and the security headers every UI response carries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse

__all__ = ["REPORT_HEADERS", "SVG_HEADERS", "UI_HEADERS", "Renderer"]

UI_HEADERS: Mapping[str, str] = {
    # No script at all, styles and images from this server only, forms post only here.
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    # same-origin: a same-origin form POST still sends its Origin (the edit check reads it).
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
"""Headers of every UI page."""

REPORT_HEADERS: Mapping[str, str] = {
    # A run's report.html: inline styles and inline SVG only; sandboxed, so nothing in it can run.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; "
    "frame-ancestors 'none'; base-uri 'none'; sandbox",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""Headers of a run's report.html as served."""

SVG_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
"""Headers of a chart served as an SVG image."""


class Renderer:
    """Renders the package's templates (autoescaped: skill text is untrusted) into responses."""

    def __init__(self, common: Mapping[str, Any]) -> None:
        """`common` holds names every template may use (e.g. the skillbook's display name)."""
        self._env = Environment(
            loader=PackageLoader("ace.server.ui", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.filters["thousands"] = lambda n: f"{n:,}"
        self._env.filters["score"] = lambda x: f"{x:.3f}"
        self._env.filters["percent_of"] = _percent_of
        self._env.filters["query"] = _query
        self._common = dict(common)

    def page(self, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
        """`template` rendered with the common names and `context`, with `UI_HEADERS`."""
        html = self._env.get_template(template).render(**self._common, **context)
        return HTMLResponse(html, status_code=status, headers=dict(UI_HEADERS))


def _query(params: Mapping[str, str], **changes: Any) -> str:
    """A query string: `params` with `changes` applied (e.g. another page number)."""
    return "?" + urlencode({**params, **changes})


def _percent_of(value: float, maximum: float) -> float:
    """`value` as a percentage of `maximum` for a bar's width (0 when the maximum is 0)."""
    return round(100.0 * value / maximum, 1) if maximum > 0 else 0.0
