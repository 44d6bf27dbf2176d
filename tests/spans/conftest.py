"""The span file fixture of the `ace-eval spans` tests (see `span_files`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from span_files import run_roots, write_span_file


@pytest.fixture
def span_file(tmp_path: Path) -> Path:
    """The run of `run_roots`, as FileSpanExporter writes it."""
    path = tmp_path / "spans.jsonl"
    write_span_file(path, run_roots())
    return path
