"""The skills HTTP API over one skillbook file (FastAPI): catalog, task matching, one skill by id.

    GET /memory/skills                    the catalog of active skills (byte-identical across calls)
    GET /memory/skills?task=...&limit=3   the skills that apply to the task; [] when none does
    GET /memory/skills/{id}               one active skill with insight, counters and occurrences

The file is re-read when it changes on disk (see `WatchedSkillbook`); no restart needed.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Query, Request, Response
from pydantic import BaseModel

from ace import __version__
from ace.retrieval import default_embedder
from ace.retrieval.cached_embedder import CachedEmbedder, match_vector_cache_path
from ace.retrieval.embedder import Embedder, EmbeddingError
from ace.retrieval.matching import DEFAULT_SHORTLIST_SIZE, SkillMatcher
from ace.retrieval.rerankers import Reranker, RerankError

from ._watched import WatchedSkillbook

__all__ = ["MAX_LIMIT", "STALE_HEADER", "SkillMatchOut", "SkillSummary", "create_app"]

STALE_HEADER = "X-Skillbook-Stale"
"""Response header present when the served state is not the file on disk (its reload failed); it
says why."""

MAX_LIMIT = DEFAULT_SHORTLIST_SIZE
"""Largest `limit` accepted: the matcher never reranks more skills than its shortlist."""


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


def create_app(
    skillbook_path: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    floor: float | None = None,
) -> FastAPI:
    """The API app for `skillbook_path`; loads the file and builds the match index before returning.

    `embedder`, `reranker` and `floor` are passed to `SkillMatcher`. With no `embedder`, the
    offline default is used and its vectors are cached beside the file (`<stem>.match-vectors.npz`),
    so a restart does not re-embed every skill. Raises `FileNotFoundError` or
    `SkillbookFormatError` when the file cannot be loaded.
    """
    cache = None if embedder is not None else CachedEmbedder(default_embedder(), match_vector_cache_path(skillbook_path))
    match_embedder = embedder if embedder is not None else cache
    watched = WatchedSkillbook(
        skillbook_path,
        lambda skillbook: SkillMatcher(skillbook, embedder=match_embedder, reranker=reranker, floor=floor),
    )
    if cache is not None:
        cache.save()
    app = FastAPI(
        title="ace skills API",
        version=__version__,
        description="The active skills of a skillbook, and the few that apply to a task.",
    )
    app.state.watched = watched

    @app.middleware("http")
    async def mark_stale_state(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        if watched.stale is not None:
            # Clients must be able to tell that they get the last good state, not the file as it is.
            reason = watched.stale.encode("ascii", "replace").decode("ascii").replace("\n", " ")
            response.headers[STALE_HEADER] = reason[:300]
        return response

    @app.get(
        "/memory/skills",
        response_model=list[SkillMatchOut] | list[SkillSummary],
        summary="The skill catalog, or the skills that apply to a task",
    )
    def list_or_match_skills(
        task: Annotated[str | None, Query(description="The task text; omit it for the full catalog.")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Most skills to return for a task.")] = 3,
    ) -> Response | list[dict[str, Any]]:
        served = watched.current()
        if cache is not None:
            cache.save()  # a no-op unless a reload embedded new texts
        if task is None:
            return Response(served.catalog, media_type="application/json")
        if not task.strip():
            raise HTTPException(422, "task must not be blank; omit it to list the full catalog")
        try:
            matches = watched.matcher.match(task, limit=limit)
        except (EmbeddingError, RerankError) as error:
            raise HTTPException(503, f"matching is unavailable: {error}") from error
        return [
            {
                "id": match.skill_id,
                "score": match.score,
                "matched_on": match.matched_on,
                "section": match.section,
                "keywords": list(match.keywords),
                "issue": match.issue,
            }
            for match in matches
        ]

    @app.get("/memory/skills/{skill_id}", summary="One active skill with insight, counters and provenance")
    def get_skill(skill_id: str) -> dict[str, Any]:
        skill = watched.current().skillbook.get_skill(skill_id)
        if skill is None or not skill.active:
            raise HTTPException(404, f"no active skill with id {skill_id!r}; GET /memory/skills lists them")
        return skill.to_dict()

    return app
