"""schemathesis over the whole API: every generated request, valid or not, gets an answer its
OpenAPI schema describes (status, content type, body, headers), and never a server error."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import settings
from matching.fixture_skills import build_acceptance_skillbook

from ace.server import create_app

EXAMPLES_PER_OPERATION = 100
READ_TIMEOUT_SECONDS = 120
"""A hang guard, not a latency check: schemathesis's default 10 s failed one request of a suite
run at the lowest priority beside a local model on this 2-core machine."""


def _served_app():
    # Built at collection: schemathesis's lazy `from_fixture` loader does not run on pytest 9
    # (it sets `Function._nodeid`). One app, one embedder load, for every example of every operation.
    folder = tempfile.TemporaryDirectory(prefix="ace-fuzz-")
    path = Path(folder.name) / "skillbook.json"
    build_acceptance_skillbook().save_to_file(path)
    app = create_app(path, allowed_hosts=["testserver"])  # the Host schemathesis's ASGI client sends
    app.state.fuzz_folder = folder  # removed with the app
    return app


schema = schemathesis.openapi.from_asgi("/openapi.json", _served_app())


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None)
def test_every_generated_request_is_answered_as_the_openapi_schema_says(case):
    case.call_and_validate(timeout=READ_TIMEOUT_SECONDS)
