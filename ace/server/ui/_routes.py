"""The UI's routes (FastAPI, left out of the API's OpenAPI schema). Each handler validates its
query, reads one served state of the skillbook (`followed.current()`, which reloads a changed
file first) and renders a template; bad input is a page saying what was wrong, with its status."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ace.retrieval import EmbeddingError, RerankError, skill_index
from ace.serving import FollowedSkillbook
from ace.skillbook import Skill, Skillbook
from ace.untrusted import UntrustedInputError, check_text, quote

from ._edits import EditAction, EditGuard, EditRefused, apply_edit
from ._errors import UiInputError
from ._history import counter_history, tag_outcome
from ._listing import (
    COUNTERS,
    SECTION_FILTERS,
    SORT_KEYS,
    STATUS_FILTERS,
    ListingCache,
    ListingQuery,
)
from ._neighbours import DUPLICATE_THRESHOLD, NearestSkills
from ._render import REPORT_HEADERS, SVG_HEADERS, UI_HEADERS, Renderer
from ._runs import list_runs, read_report_file, run_folder
from .charts import chart_svg, new_chart

if TYPE_CHECKING:
    from . import UiOptions

__all__ = ["mount"]

SEARCH_RESULTS = 50
"""Active skills the text search ranks (one page)."""
MAX_PLAYGROUND_TASK_CHARS = 20_000
"""Longest task the playground takes in its URL; longer ones go to `POST /memory/skills/match`."""
MAX_PLAYGROUND_LIMIT = 20
NEAREST = 5
_NOTICES = {
    "removed": "Removed: the skill is inactive (never injected or matched); activate undoes it.",
    "activated": "Activated: the skill is listed, injected and matched again.",
}


def mount(
    app: FastAPI, followed: FollowedSkillbook, location: str | os.PathLike[str], display: str, options: UiOptions
) -> None:
    """See `ace.server.ui.mount_ui`."""
    pages = _Pages(followed, location, display, options)
    router = APIRouter(prefix="/ui", include_in_schema=False)
    router.add_api_route("", pages.skillbook_page, methods=["GET"])
    router.add_api_route("/skills/{skill_id}", pages.skill_page, methods=["GET"])
    router.add_api_route("/skills/{skill_id}/counters.svg", pages.counters_chart, methods=["GET"])
    router.add_api_route("/skills/{skill_id}/remove", pages.remove, methods=["POST"])
    router.add_api_route("/skills/{skill_id}/activate", pages.activate, methods=["POST"])
    router.add_api_route("/match", pages.match_page, methods=["GET"])
    router.add_api_route("/runs", pages.runs_page, methods=["GET"])
    router.add_api_route("/runs/{name}", pages.run_page, methods=["GET"])
    router.add_api_route("/{rest:path}", pages.not_found, methods=["GET"])
    app.mount("/ui/static", StaticFiles(packages=[("ace.server.ui", "static")]), name="ui-static")
    app.include_router(router)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/ui", status_code=307)

    @app.middleware("http")
    async def ui_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        if request.url.path.startswith("/ui"):
            for header, value in UI_HEADERS.items():
                response.headers.setdefault(header, value)
        return response


class _Pages:
    """The UI's handlers over one followed skillbook; `mount` routes each one."""

    def __init__(
        self, followed: FollowedSkillbook, location: str | os.PathLike[str], display: str, options: UiOptions
    ) -> None:
        self.followed = followed
        self.location = location
        self.options = options
        shared_token = {} if options.edit_token is None else {"token": options.edit_token}
        self.guard = EditGuard(hostnames=options.edit_hostnames, **shared_token) if options.allow_edits else None
        self.renderer = Renderer({"location": display, "edits": self.guard is not None})
        self.listings = ListingCache()
        self.nearest = NearestSkills(followed.matcher.embedder)

    def page(self, template: str, nav: str, *, status: int = 200, **context: Any) -> HTMLResponse:
        return self.renderer.page(template, status=status, nav=nav, stale=self.followed.stale, **context)

    def error_page(self, status: int, message: str, nav: str = "") -> HTMLResponse:
        return self.page("error.html", nav, status=status, status_code=status, message=message)

    def search(self, skillbook: Skillbook) -> Callable[[str, str], Sequence[Skill]]:
        index = skill_index(skillbook, self.followed.matcher.embedder)
        return lambda text, section: index.search(
            text, top_k=SEARCH_RESULTS, section=None if section == "all" else section
        )

    def skillbook_page(self, request: Request) -> HTMLResponse:
        params = request.query_params
        try:
            text = _text(params.get("q", ""), "q", 500)
            query = ListingQuery(
                status=_choice(params, "status", STATUS_FILTERS, "active"),  # type: ignore[arg-type]
                section=_choice(params, "section", SECTION_FILTERS, "all"),
                sort=_choice(params, "sort", SORT_KEYS, "relevance" if text else "id"),
                text=text,
                page=_page_number(params.get("page", "1")),
            )
        except UiInputError as error:
            return self.error_page(400, str(error), "skillbook")
        skillbook = self.followed.current().skillbook
        listing = self.listings.listing_for(skillbook)
        try:
            result = listing.page(query, self.search(skillbook))
        except EmbeddingError as error:
            return self.error_page(503, f"search is unavailable: {error}", "skillbook")
        return self.page(
            "skillbook.html",
            "skillbook",
            query=query,
            result=result,
            counters=COUNTERS,
            totals=listing.totals,
            sort_keys=SORT_KEYS,
            params=dict(params),
            search_results=SEARCH_RESULTS,
        )

    def skill_page(self, skill_id: str, request: Request) -> HTMLResponse:
        skillbook = self.followed.current().skillbook
        skill = skillbook.get_skill(skill_id)
        if skill is None:
            return self.error_page(
                404, f"the skillbook has no skill {quote(skill_id)}; the skillbook page lists them", "skillbook"
            )
        neighbours, neighbour_error = [], None
        try:
            neighbours = self.nearest.nearest(skillbook, skill, limit=NEAREST)
        except EmbeddingError as error:
            neighbour_error = str(error)
        notice = _NOTICES.get(request.query_params.get("done", ""))
        counter_max = self.listings.listing_for(skillbook).counter_max
        return self.page(
            "skill.html",
            "skillbook",
            skill=skill,
            counters=COUNTERS,
            counter_max=counter_max,
            history=counter_history(skill),
            tag_outcome=tag_outcome,
            neighbours=neighbours,
            neighbour_error=neighbour_error,
            duplicate_threshold=DUPLICATE_THRESHOLD,
            notice=notice,
            token=self.guard.token if self.guard is not None else None,
        )

    def counters_chart(self, skill_id: str) -> Response:
        skill = self.followed.current().skillbook.get_skill(skill_id)
        if skill is None:
            return Response(status_code=404, headers=dict(SVG_HEADERS))
        return Response(_counters_svg(skill), media_type="image/svg+xml", headers=dict(SVG_HEADERS))

    async def edit(self, skill_id: str, action: EditAction, request: Request, token: str, reason: str) -> Response:
        if self.guard is None:
            return self.error_page(403, "edits are off: restart the server with ace serve --allow-edits", "skillbook")
        try:
            self.guard.check(
                scheme=request.url.scheme,
                host=request.headers.get("host"),
                origin=request.headers.get("origin"),
                fetch_site=request.headers.get("sec-fetch-site"),
                token=token,
            )
            await run_in_threadpool(apply_edit, self.location, skill_id, action, reason)
        except EditRefused as refused:
            return self.error_page(refused.status, str(refused), "skillbook")
        done = "removed" if action == "remove" else "activated"
        return RedirectResponse(f"/ui/skills/{skill_id}?done={done}", status_code=303)

    async def remove(self, skill_id: str, request: Request, token: str = Form(""), reason: str = Form("")) -> Response:
        return await self.edit(skill_id, "remove", request, token, reason)

    async def activate(
        self, skill_id: str, request: Request, token: str = Form(""), reason: str = Form("")
    ) -> Response:
        return await self.edit(skill_id, "activate", request, token, reason)

    def match_page(self, request: Request) -> HTMLResponse:
        params = request.query_params
        try:
            task = _text(params.get("task", ""), "task", MAX_PLAYGROUND_TASK_CHARS)
            limit = _bounded_int(params.get("limit", "3"), "limit", 1, MAX_PLAYGROUND_LIMIT)
        except UiInputError as error:
            return self.error_page(400, str(error), "match")
        explanation = None
        if task.strip():
            self.followed.current()
            try:
                explanation = self.followed.matcher.explain(task, limit=limit)
            except (EmbeddingError, RerankError) as error:
                return self.error_page(503, f"matching is unavailable: {error}", "match")
        return self.page(
            "match.html",
            "match",
            task=task,
            limit=limit,
            max_limit=MAX_PLAYGROUND_LIMIT,
            max_chars=MAX_PLAYGROUND_TASK_CHARS,
            explanation=explanation,
            reranker=self.followed.matcher.reranker.name,
        )

    def runs_page(self) -> HTMLResponse:
        runs_dir = self.options.runs_dir
        if runs_dir is None:
            return self.page("runs.html", "runs", runs_dir=None, runs=[], problem=None)
        try:
            runs, problem = list_runs(runs_dir), None
        except OSError as error:
            runs, problem = [], f"{runs_dir} cannot be listed: {error.strerror or error}"
        return self.page("runs.html", "runs", runs_dir=str(runs_dir), runs=runs, problem=problem)

    def run_page(self, name: str) -> Response:
        folder = run_folder(self.options.runs_dir, name) if self.options.runs_dir is not None else None
        if folder is None:
            return self.error_page(404, f"no run folder {quote(name)}; the runs page lists them", "runs")
        try:
            html = read_report_file(folder, "report.html")
            if html is not None:
                return HTMLResponse(html, headers=dict(REPORT_HEADERS))
            markdown = read_report_file(folder, "report.md")
        except (OSError, UntrustedInputError) as error:
            return self.error_page(409, f"the run's report cannot be shown: {error}", "runs")
        return self.page("run_text.html", "runs", name=name, markdown=markdown)

    def not_found(self, rest: str) -> HTMLResponse:
        return self.error_page(404, f"no page /ui/{quote(rest)}; use the links above")


def _counters_svg(skill: Skill) -> str:
    history = counter_history(skill)
    series = [("helpful", "#1a7f37"), ("harmful", "#cf222e"), ("neutral", "#57606a")]
    if any(point.unknown for point in history):
        series.append(("unknown", "#8250df"))
    top = max((getattr(point, name) for point in history for name, _ in series), default=0)
    chart = new_chart(
        "Line",
        colors=tuple(color for _, color in series),
        height=260,
        legend_at_bottom=True,
        margin_right=56,
        x_labels_major_count=8,
        show_minor_x_labels=False,
        include_x_axis=True,
        title=f"Tags of {skill.id} after each TAG occurrence",
    )
    chart.x_labels = [point.label for point in history] or ["none yet"]
    chart.y_labels = list(range(0, top + 1, max(1, top // 8 + (top % 8 > 0))))
    for name, _ in series:
        label = "outcome not recorded" if name == "unknown" else name
        chart.add(label, [getattr(point, name) for point in history] or [0])
    last = history[-1] if history else None
    summary = (
        f"after {len(history)} tags: helpful {last.helpful}, harmful {last.harmful}, neutral {last.neutral}"
        if last is not None
        else "never tagged"
    )
    return '<?xml version="1.0" encoding="utf-8"?>\n' + chart_svg(chart, f"Tags of {skill.id} over time, {summary}")


def _choice(params: Any, name: str, allowed: Sequence[str], default: str) -> str:
    value = params.get(name) or default
    if value not in allowed:
        raise UiInputError(f"{name} must be one of {', '.join(allowed)}, got {quote(value)}")
    return cast(str, value)


def _page_number(value: str) -> int:
    return _bounded_int(value, "page", 1, 10**9)


def _bounded_int(value: str, name: str, low: int, high: int) -> int:
    if not value.isascii() or not value.isdigit() or not low <= int(value[:12]) <= high:
        raise UiInputError(f"{name} must be a whole number from {low} to {high:,}, got {quote(value)}")
    return int(value)


def _text(value: str, name: str, limit: int) -> str:
    try:
        check_text(value, name)
    except UntrustedInputError as error:
        raise UiInputError(str(error)) from None
    if len(value) > limit:
        raise UiInputError(f"{name} is {len(value):,} characters; at most {limit:,} are accepted here")
    return value.strip()
