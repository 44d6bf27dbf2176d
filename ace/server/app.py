"""The skills HTTP API over one skillbook file (FastAPI): catalog, task matching, one skill by id.

    GET  /memory/skills                    the catalog of active skills (byte-identical across calls)
    GET  /memory/skills?task=...&limit=3   the skills that apply to the task; [] when none does
    POST /memory/skills/match              the same, the task in a JSON body (long tasks)
    GET  /memory/skills/{id}               one active skill with insight, counters and occurrences
    GET  /docs, /redoc                     the API's documentation pages, served from local assets
    GET  /ui                               the skillbook UI (`ace.server.ui`, docs/ui.md)

The skillbook is followed (`ace.serving.follow`): a file is re-read when it changes on disk, a
database followed through LISTEN/NOTIFY; no restart needed. The follower is closed on shutdown.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Query, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, TypeAdapter
from starlette.middleware.trustedhost import TrustedHostMiddleware

from ace import __version__
from ace.errors import UsageError
from ace.retrieval.embedder import Embedder, EmbeddingError
from ace.retrieval.matching import SkillMatcher
from ace.retrieval.rerankers import Reranker, RerankError
from ace.retrieval.task_vector_cache import DEFAULT_CACHE_ENTRIES, TaskVectorCache
from ace.serving import FollowedSkillbook, closing_lifespan, follow, match_json
from ace.untrusted import quote

from ._inputs import (
    DEFAULT_LIMIT,
    MAX_BODY_BYTES,
    MAX_LIMIT,
    MAX_TASK_CHARS,
    MatchRequest,
    TaskText,
    short_validation_errors,
)
from ._request_limits import (
    BODY_TIMEOUT_S,
    LOOPBACK_HOSTS,
    MAX_BUFFERED_BODY_BYTES,
    BodyBudget,
    BodyLimits,
    allowed_host_patterns,
)
from ._stale_header import STALE_HEADER, StaleStateHeader
from .ui import UiOptions, mount_ui

__all__ = [
    "BODY_TIMEOUT_S",
    "LOOPBACK_HOSTS",
    "MAX_BODY_BYTES",
    "MAX_BUFFERED_BODY_BYTES",
    "MAX_LIMIT",
    "MAX_TASK_CHARS",
    "STALE_HEADER",
    "ErrorDetail",
    "MatchRequest",
    "SkillMatchOut",
    "SkillSummary",
    "allowed_host_patterns",
    "create_app",
]


class SkillSummary(BaseModel):
    """A catalog entry: when the skill applies."""

    id: str
    section: str
    keywords: list[str]
    issue: str


class SkillMatchOut(BaseModel):
    """A skill that applies to the task, with its rerank score and the field that drove the match."""

    id: str
    score: float
    matched_on: Literal["issue", "keywords"]
    section: str
    keywords: list[str]
    issue: str


class ErrorDetail(BaseModel):
    """An error answer other than a validation error: what went wrong and what to do."""

    detail: str


_MATCHES = TypeAdapter(list[SkillMatchOut])
"""Validates and encodes a match answer."""

_STALE_DOC = {
    STALE_HEADER: {
        "description": "Present when the skillbook file could not be reloaded: the answer is the last "
        "good state, and the header says why.",
        "schema": {"type": "string"},
    }
}
_OK = {"description": "Successful Response", "headers": _STALE_DOC}
_UNAVAILABLE = {"model": ErrorDetail, "description": "The embedder or the reranker failed; the reason."}


def create_app(
    skillbook_path: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    floor: float | None = None,
    ui: UiOptions | None = None,
    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
    body_timeout_s: float = BODY_TIMEOUT_S,
    max_buffered_body_bytes: int = MAX_BUFFERED_BODY_BYTES,
    task_cache_entries: int = DEFAULT_CACHE_ENTRIES,
    batch_tasks: bool = True,
) -> FastAPI:
    """The API app for `skillbook_path`; loads the file and builds the match index before returning.

    `embedder`, `reranker` and `floor` are passed to `SkillMatcher` (no `embedder`: the offline
    default). The matcher uses the match vectors stored in the skillbook's `.embeddings.npz`
    sidecar and embeds, in memory, only the skills that have none; the server never writes the
    skillbook (a writer that saves it after matching stores them), except for the UI's edits when
    `ui` allows them (`UiOptions`; default: a read-only UI without runs). Raises `FileNotFoundError` or `SkillbookError`
    (`SkillbookFormatError` for a malformed file) when the file cannot be loaded.

    Requests are answered only when their Host is one of `allowed_hosts` (Starlette's
    `TrustedHostMiddleware` patterns; default the loopback names, so a DNS-rebinding page cannot
    read the skills; `["*"]` accepts any), and their bodies are held to `MAX_BODY_BYTES` (413),
    `body_timeout_s` (408) and, all requests together, `max_buffered_body_bytes` (503;
    `app.state.body_budget` counts the bytes held): see `ace.server._request_limits`.

    The vectors of the last `task_cache_entries` distinct tasks are kept (`TaskVectorCache`, also
    bounded by bytes; 0 keeps none), so a repeated task is not embedded again, and with
    `batch_tasks` concurrent requests share embedding calls (`EmbeddingBatcher`): either way every
    answer is, to the byte, the one an uncached server gives (docs/serving.md).
    """
    from fastapi_offline import FastAPIOffline

    if isinstance(task_cache_entries, bool) or not isinstance(task_cache_entries, int) or task_cache_entries < 0:
        raise UsageError(f"task_cache_entries must be an integer >= 0, got {task_cache_entries!r}")
    task_cache = TaskVectorCache(max_entries=task_cache_entries) if task_cache_entries else None
    followed = follow(
        skillbook_path,
        lambda skillbook: SkillMatcher(
            skillbook, embedder=embedder, reranker=reranker, floor=floor, task_cache=task_cache, batch_tasks=batch_tasks
        ),
    )
    # FastAPIOffline: /docs and /redoc load Swagger UI and ReDoc from the package, not from a CDN.
    app = FastAPIOffline(
        title="ace skills API",
        version=__version__,
        description="The active skills of a skillbook, and the few that apply to a task.",
        lifespan=closing_lifespan(followed),
    )
    app.state.followed = followed
    app.add_exception_handler(RequestValidationError, short_validation_errors)
    app.state.body_budget = BodyBudget(limit=max_buffered_body_bytes)
    app.add_middleware(BodyLimits, max_bytes=MAX_BODY_BYTES, timeout_s=body_timeout_s, budget=app.state.body_budget)

    app.add_middleware(StaleStateHeader, followed=followed)

    mount_ui(app, followed, skillbook_path, followed.display, ui or UiOptions())
    _add_skill_routes(app, followed)
    _add_skill_route(app, followed)
    # Added last, so outermost: a request to another Host is refused before its body is read.
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    return app


def _add_skill_routes(app: FastAPI, followed: FollowedSkillbook) -> None:
    """`/memory/skills`: the catalog, a task's matches (GET and POST), one skill."""

    def match(task: str, limit: int) -> Response:
        followed.current()
        try:
            matches = followed.matcher.match(task, limit=limit)
        except (EmbeddingError, RerankError) as error:
            raise HTTPException(503, f"matching is unavailable: {error}") from error
        # Encoded here, in the request's worker thread, the way FastAPI encodes a response_model
        # (same bytes): returning the list would cost a second trip through the thread pool.
        validated = _MATCHES.validate_python([match_json(m) for m in matches])
        return Response(_MATCHES.dump_json(validated, by_alias=True), media_type="application/json")

    @app.get(
        "/memory/skills",
        response_model=list[SkillMatchOut] | list[SkillSummary],
        summary="The skill catalog, or the skills that apply to a task",
        responses={200: _OK, 503: _UNAVAILABLE},
    )
    def list_or_match_skills(
        task: Annotated[TaskText | None, Query(description="The task text; omit it for the full catalog.")] = None,
        limit: Annotated[
            int, Query(ge=1, le=MAX_LIMIT, description="Most skills to return for a task.")
        ] = DEFAULT_LIMIT,
    ) -> Response:
        if task is None:
            served = followed.current()
            return Response(served.catalog, media_type="application/json")
        return match(task, limit)

    @app.post(
        "/memory/skills/match",
        response_model=list[SkillMatchOut],
        summary="The skills that apply to a task sent in a JSON body (for tasks too long for a URL)",
        responses={
            200: _OK,
            400: {"model": ErrorDetail, "description": "The body could not be read (e.g. it is not UTF-8)."},
            408: {
                "model": ErrorDetail,
                "description": "The body did not arrive within the server's deadline "
                f"({BODY_TIMEOUT_S:g} s by default).",
            },
            413: {"model": ErrorDetail, "description": f"The body is over {MAX_BODY_BYTES:,} bytes."},
            503: {
                "model": ErrorDetail,
                "description": "The embedder or the reranker failed, or the server holds "
                "its limit of request bodies (retry after the Retry-After seconds); the reason.",
            },
        },
        description=f"Same answer as `GET /memory/skills?task=&limit=`. The task is at most "
        f"{MAX_TASK_CHARS:,} characters (422 above); a body over {MAX_BODY_BYTES:,} bytes is refused with 413.",
    )
    def match_skills(request: MatchRequest) -> Response:
        return match(request.task, request.limit)


def _add_skill_route(app: FastAPI, followed: FollowedSkillbook) -> None:
    """`GET /memory/skills/{id}`: one active skill."""

    @app.get(
        "/memory/skills/{skill_id}",
        summary="One active skill with insight, counters and provenance",
        responses={
            200: _OK,
            404: {"model": ErrorDetail, "description": "No active skill has this id."},
        },
    )
    def get_skill(skill_id: str) -> dict[str, Any]:
        skill = followed.current().skillbook.get_skill(skill_id)
        if skill is None or not skill.active:
            raise HTTPException(404, f"no active skill with id {quote(skill_id)}; GET /memory/skills lists them")
        return skill.to_dict()
