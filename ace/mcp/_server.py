"""`create_server`: the skillbook as an MCP server (tools and resources), on the official `mcp` SDK.

Tools: `match_skills`, `search_skills`, `read_skill`, `record_trace`. Resources: `skillbook://catalog`
and `skillbook://skills/{skill_id}`. Answers are the JSON of the skills HTTP API (`ace serve`), as
text. The skillbook (a file, or a `postgresql://` URL) is followed like `ace serve` does: edits
show on the next call.

Built on the SDK's 1.x `FastMCP` (the `eval` extra's tau3 package pins `mcp<2`). A `ToolError`
reaches the client as a tool result with `isError` set and the message (prefixed by the SDK with
"Error executing tool NAME: "), never a traceback.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ResourceError, ToolError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from pydantic import Field

from ace import __version__
from ace.errors import UsageError
from ace.retrieval import retrieve_top_k
from ace.retrieval.embedder import Embedder, EmbeddingError
from ace.retrieval.matching import DEFAULT_SHORTLIST_SIZE, SkillMatcher
from ace.retrieval.rerankers import Reranker, RerankError
from ace.retrieval.task_vector_cache import DEFAULT_CACHE_ENTRIES, TaskVectorCache
from ace.serving import MAX_TASK_CHARS, FollowedSkillbook, ServedSkillbook, closing_lifespan, follow, match_json
from ace.skillbook import Section, Skill, Skillbook, SkillbookError
from ace.skillbook.storage import FileStore, open_store
from ace.untrusted import UntrustedInputError, check_text, quote

from ._traces import TraceQuota, TraceRecordError, record_trace, trace_queue_path

__all__ = ["CATALOG_URI", "MAX_TASK_CHARS", "SKILL_URI", "create_server"]

CATALOG_URI = "skillbook://catalog"
"""The resource listing every active skill: id, section, keywords, issue."""
SKILL_URI = "skillbook://skills/{skill_id}"
"""The resource of one active skill, as `read_skill` returns it."""
MAX_TOP_K = 50
"""Most skills `search_skills` returns."""

_INSTRUCTIONS = (
    "A skillbook of short skills learned from past agent runs. Before a task, call match_skills with "
    "the task text: it returns the few skills that apply, usually none ([]). read_skill gives a skill's "
    "insight (what to do). search_skills is a free-text search over all skills. After the task, "
    "record_trace queues what happened for offline learning."
)


_TEMPLATE_ERROR_PREFIX = re.compile(r"^(?:Error creating resource from template: )+")


class _SkillbookServer(FastMCP):
    """FastMCP whose resource errors say what went wrong once (the SDK prefixes a template's error
    with "Error creating resource from template: " twice)."""

    async def read_resource(self, uri: Any) -> Iterable[ReadResourceContents]:
        try:
            return await super().read_resource(uri)
        except ValueError as error:
            raise ResourceError(_TEMPLATE_ERROR_PREFIX.sub("", str(error))) from None


def create_server(
    skillbook_path: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    floor: float | None = None,
    traces: str | os.PathLike[str] | None = None,
    trace_quota: TraceQuota | None = None,
    log_level: str = "warning",
    task_cache_entries: int = DEFAULT_CACHE_ENTRIES,
) -> FastMCP:
    """The MCP server over `skillbook_path`; loads the file and builds the match index first.

    `embedder`, `reranker` and `floor` go to `SkillMatcher` (`embedder` also to `search_skills`);
    with no `embedder`, the offline default is used; match vectors the skillbook's sidecar lacks are
    computed in memory, never written, as `ace serve` does. `traces` is the folder `record_trace` writes to (default
    `trace_queue_path(skillbook_path)`), holding at most what `trace_quota` allows (default
    `TraceQuota()`: 10,000 traces, 512 MiB; beyond it `record_trace` is a tool error). Raises `OSError` or
    `SkillbookError` when the file cannot
    be loaded. Run it with `server.run("stdio")`, or set `server.settings.port` and
    `server.run("streamable-http")`: FastMCP's default host, 127.0.0.1, also turns on its
    DNS-rebinding protection; the endpoint is /mcp. `log_level` is FastMCP's (`debug` ... `error`;
    it configures logging only when the application has not). The vectors of the last
    `task_cache_entries` distinct tasks are kept (`TaskVectorCache`; 0: none), so an agent that asks
    about the same task again is answered without embedding it again; the answers are the same.
    Raises `UsageError` for a negative `task_cache_entries`.
    """
    if isinstance(task_cache_entries, bool) or not isinstance(task_cache_entries, int) or task_cache_entries < 0:
        raise UsageError(f"task_cache_entries must be an integer >= 0, got {task_cache_entries!r}")
    task_cache = TaskVectorCache(max_entries=task_cache_entries) if task_cache_entries else None
    if traces is None and not isinstance(open_store(skillbook_path), FileStore):
        raise UsageError(
            "a skillbook in PostgreSQL has no folder beside it: give `traces`, the folder record_trace writes to"
        )
    followed = follow(
        skillbook_path,
        lambda skillbook: SkillMatcher(
            skillbook, embedder=embedder, reranker=reranker, floor=floor, task_cache=task_cache
        ),
    )
    queue = Path(traces) if traces is not None else trace_queue_path(skillbook_path)
    tools = _Tools(followed, embedder, queue, trace_quota if trace_quota is not None else TraceQuota())
    server = _SkillbookServer(
        "ace-skillbook",
        instructions=_INSTRUCTIONS,
        log_level=log_level.upper(),  # type: ignore[arg-type]
        lifespan=closing_lifespan(followed),
    )
    # FastMCP takes no version; without one, serverInfo would report the SDK's own version.
    server._mcp_server.version = __version__
    server.add_tool(tools.match_skills, structured_output=False)
    server.add_tool(tools.search_skills, structured_output=False)
    server.add_tool(tools.read_skill, structured_output=False)
    server.add_tool(tools.record_trace, structured_output=False)
    server.resource(
        CATALOG_URI,
        name="catalog",
        mime_type="application/json",
        description="Every active skill: id, section, keywords, issue.",
    )(tools.catalog)
    server.resource(
        SKILL_URI,
        name="skill",
        mime_type="application/json",
        description="One active skill with insight, counters and occurrences.",
    )(tools.skill_resource)
    return server


class _Tools:
    """The MCP tools and resources over one followed skillbook; `create_server` registers each."""

    def __init__(self, followed: FollowedSkillbook, embedder: Embedder | None, queue: Path, quota: TraceQuota) -> None:
        self.followed = followed
        self.embedder = embedder
        self.queue = queue
        self.quota = quota

    def current(self) -> ServedSkillbook:
        return self.followed.current()

    def match_skills(
        self,
        task: Annotated[str, Field(description="The task the agent is about to do, as the user gave it.")],
        limit: Annotated[int, Field(ge=1, le=DEFAULT_SHORTLIST_SIZE, description="Most skills to return.")] = 3,
    ) -> str:
        """The skills that apply to a task, best first, as JSON: id, score, matched_on, section,
        keywords, issue. Usually [] - nothing applies; then go on without skills."""
        task = _task_text(task, "task")
        self.current()
        try:
            matches = self.followed.matcher.match(task, limit=limit)
        except (EmbeddingError, RerankError) as error:
            raise ToolError(f"matching is unavailable: {error}") from error
        return _json([match_json(m) for m in matches])

    def search_skills(
        self,
        query: Annotated[str, Field(description="Free text; matched against issue, insight and keywords.")],
        top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K, description="Most skills to return.")] = 5,
        section: Annotated[Section | None, Field(description="Only skills of this section.")] = None,
        keywords: Annotated[
            list[str] | None, Field(description="Only skills carrying at least one of these keywords.")
        ] = None,
    ) -> str:
        """Search every active skill (hybrid BM25 + embeddings), best first, as JSON: id, section,
        keywords, issue, insight. Unlike match_skills it always ranks something when skills exist."""
        query = _task_text(query, "query")
        skillbook = self.current().skillbook
        try:
            found = retrieve_top_k(
                skillbook, query, top_k=top_k, section=section, keywords=keywords, embedder=self.embedder
            )
        except EmbeddingError as error:
            raise ToolError(f"search is unavailable: {error}") from error
        except (SkillbookError, ValueError) as error:
            raise ToolError(f"invalid search: {error}") from None
        return _json(
            [
                {"id": s.id, "section": s.section, "keywords": list(s.keywords), "issue": s.issue, "insight": s.insight}
                for s in found
            ]
        )

    def read_skill(self, id: Annotated[str, Field(description="A skill id, e.g. context-00001.")]) -> str:
        """One active skill as JSON, as GET /memory/skills/{id} gives it: insight, counters, occurrences."""
        skill = _active_skill(self.current().skillbook, id)
        if skill is None:
            raise ToolError(
                f"no active skill with id {quote(id)}; match_skills, search_skills or the "
                f"{CATALOG_URI} resource list the ids"
            )
        return _json(skill.to_dict())

    def record_trace(
        self,
        task: Annotated[str, Field(description="The task the agent worked on.")],
        transcript: Annotated[
            str | list[dict[str, Any]],
            Field(description='What happened: text, or chat messages (objects with a "role").'),
        ],
        outcome: Annotated[str, Field(description="How it ended, e.g. 'tests pass' or 'failed: wrong total'.")],
    ) -> str:
        """Queue a finished task's trace for offline learning (no model is called); returns the file."""
        try:
            path = record_trace(self.queue, task, transcript, outcome, quota=self.quota)
        except TraceRecordError as error:
            raise ToolError(str(error)) from None
        return _json({"recorded": str(path)})

    def catalog(self) -> str:
        return self.current().catalog.decode("utf-8")

    def skill_resource(self, skill_id: str) -> str:
        skill = _active_skill(self.current().skillbook, skill_id)
        if skill is None:
            raise ResourceError(f"no active skill with id {quote(skill_id)}; {CATALOG_URI} lists them")
        return _json(skill.to_dict())


def _task_text(text: str, name: str) -> str:
    if not text.strip():
        raise ToolError(f'{name} is blank; send the text to match, e.g. "fix the failing CI build"')
    if len(text) > MAX_TASK_CHARS:
        raise ToolError(f"{name} is {len(text):,} characters, over the {MAX_TASK_CHARS:,}-character limit")
    try:
        return check_text(text, name)
    except UntrustedInputError as error:
        raise ToolError(str(error)) from None


def _active_skill(skillbook: Skillbook, skill_id: str) -> Skill | None:
    skill = skillbook.get_skill(skill_id)
    return skill if skill is not None and skill.active else None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
