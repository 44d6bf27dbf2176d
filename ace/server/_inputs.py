"""What a request to the skills API may hold: the task text and its limits, the POST body, and
422 answers that stay short and valid JSON whatever the client sent (the body's size, deadline and
memory budget: `_request_limits`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from starlette.responses import JSONResponse

from ace.retrieval.matching import DEFAULT_SHORTLIST_SIZE
from ace.serving import MAX_TASK_CHARS
from ace.untrusted import UntrustedInputError, check_text, quote

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_BODY_BYTES",
    "MAX_LIMIT",
    "MAX_TASK_CHARS",
    "NON_BLANK_PATTERN",
    "MatchRequest",
    "TaskText",
    "short_validation_errors",
]


MAX_BODY_BYTES = 8 * 1024 * 1024
"""Largest request body read. A task of `MAX_TASK_CHARS` characters fits even when every character
is written as a JSON escaped surrogate pair (12 bytes); a larger body is answered 413 unread."""

MAX_LIMIT = DEFAULT_SHORTLIST_SIZE
"""Largest `limit` accepted: the matcher never reranks more skills than its shortlist."""

DEFAULT_LIMIT = 3
"""Skills returned for a task when the request does not say `limit`."""

NON_BLANK_PATTERN = (
    "[^\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
)
"""JSON Schema pattern of a task that is not blank: one character that Python's `str.strip()` does
not strip. Spelled out because `\\s` means three different sets in Python, ECMAScript and Rust."""


def _checked_task(task: str) -> str:
    check_text(task, "task")
    if not task.strip():
        raise ValueError("task must not be blank; omit it (GET) to list the full catalog")
    return task


def _json_integer(value: Any) -> Any:
    # What JSON Schema calls an integer: 3 or 3.0 (pydantic checks the fraction), never "3" or true.
    if isinstance(value, (str, bool)):
        raise ValueError(f"limit must be a JSON integer, got {quote(value)}")
    return value


TaskText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_TASK_CHARS,
        json_schema_extra={"pattern": NON_BLANK_PATTERN},
        description=f"The task text: valid Unicode, not blank, at most {MAX_TASK_CHARS:,} characters.",
    ),
    AfterValidator(_checked_task),
]
"""A task as the API accepts it; anything else is a 422 naming the defect."""


class MatchRequest(BaseModel):
    """Body of `POST /memory/skills/match`: the same question as `GET /memory/skills?task=&limit=`."""

    model_config = ConfigDict(extra="forbid")

    task: TaskText
    """The task text."""
    limit: Annotated[
        int, Field(ge=1, le=MAX_LIMIT, description="Most skills to return."), BeforeValidator(_json_integer)
    ] = DEFAULT_LIMIT
    """Most skills to return."""


def _short(text: str) -> str:
    """`text` made safe for a UTF-8 JSON answer of bounded size (lone surrogates escaped, cut)."""
    if len(text) > 200:
        text = text[:200] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


async def short_validation_errors(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422 (`{"detail": [{"loc", "msg", "type"}]}`) without echoing the input: a rejected
    500,000-character task is not sent back, and a lone surrogate in it cannot break the JSON encoder."""
    assert isinstance(exc, RequestValidationError)
    detail = [
        {
            "loc": [part if isinstance(part, int) else _short(str(part)) for part in error.get("loc", ())],
            "msg": _short(_message(error)),
            "type": _short(str(error.get("type", ""))),
        }
        for error in exc.errors()
    ]
    return JSONResponse(status_code=422, content={"detail": jsonable_encoder(detail)})


def _message(error: dict[str, Any]) -> str:
    value = error.get("input")
    if error.get("type") == "string_unicode" and isinstance(value, str):
        # A JSON `"\ud800"` escape decodes to a lone surrogate, which pydantic refuses with a vague
        # "unable to parse raw data as a unicode string"; say what and where instead.
        try:
            check_text(value, str(error.get("loc", ("text",))[-1]))
        except UntrustedInputError as exc:
            return str(exc)
    return str(error.get("msg", ""))
