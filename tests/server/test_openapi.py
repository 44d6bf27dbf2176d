"""The OpenAPI schema says what the server does: error bodies, limits, and /docs without a network."""

from __future__ import annotations

import re
import sys

import jsonschema
import pytest

from ace.server import MAX_TASK_CHARS


def response_schema(openapi: dict, path: str, method: str, status: int) -> dict:
    content = openapi["paths"][path][method]["responses"][str(status)]["content"]["application/json"]
    return {**content["schema"], "components": openapi["components"]}


def test_openapi_schema_documents_every_route(client):
    paths = client.get("/openapi.json").json()["paths"]

    assert {(p, m) for p, ops in paths.items() for m in ops} == {
        ("/memory/skills", "get"),
        ("/memory/skills/match", "post"),
        ("/memory/skills/{skill_id}", "get"),
    }
    assert {p["name"] for p in paths["/memory/skills"]["get"]["parameters"]} == {"task", "limit"}


@pytest.mark.parametrize("task", ["", "   ", "\u3000\x1c"])
def test_blank_task_422_body_matches_the_documented_schema(client, task):
    openapi = client.get("/openapi.json").json()

    response = client.get("/memory/skills", params={"task": task})

    assert response.status_code == 422
    jsonschema.validate(response.json(), response_schema(openapi, "/memory/skills", "get", 422))
    [error] = response.json()["detail"]
    assert error["loc"] == ["query", "task"]


def test_schema_says_a_task_is_non_blank_and_bounded(client):
    [task] = [
        p
        for p in client.get("/openapi.json").json()["paths"]["/memory/skills"]["get"]["parameters"]
        if p["name"] == "task"
    ]
    [text] = [s for s in task["schema"]["anyOf"] if s.get("type") == "string"]

    assert (text["minLength"], text["maxLength"]) == (1, MAX_TASK_CHARS)
    pattern = re.compile(text["pattern"])
    # The pattern accepts a string exactly when the server does: it holds a character strip() keeps.
    disagreeing = [c for c in map(chr, range(sys.maxunicode + 1)) if bool(pattern.search(c)) == c.isspace()]
    assert disagreeing == []


def test_unknown_skill_404_is_documented_with_its_body(client):
    openapi = client.get("/openapi.json").json()

    response = client.get("/memory/skills/context-09999")

    assert response.status_code == 404
    jsonschema.validate(response.json(), response_schema(openapi, "/memory/skills/{skill_id}", "get", 404))


def test_post_match_documents_its_limits(client):
    operation = client.get("/openapi.json").json()["paths"]["/memory/skills/match"]["post"]

    assert {"200", "413", "422"} <= set(operation["responses"])
    assert f"{MAX_TASK_CHARS:,}" in operation["description"]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_only_local_assets_and_those_are_served(client, page):
    html = client.get(page).text

    urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", html)
    assert urls and not [u for u in urls if re.match(r"(https?:)?//", u)]
    assert "cdn" not in html.lower()
    for url in urls:
        assert client.get(url).status_code == 200, url
