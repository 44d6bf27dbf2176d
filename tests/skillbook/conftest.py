"""Fixtures for the skillbook tests: a provenance record and a small two-section skillbook."""

from __future__ import annotations

import pytest

from ace.skillbook import InsightSource, Skillbook

CABIN_ISSUE = (
    "In tau-airline's update_reservation_flights API, cabin class is a single param applied to all "
    "legs/passengers — no per-leg or per-passenger differentiation."
)
CABIN_INSIGHT = (
    "Before offering per-passenger or per-leg upgrades, immediately tell the user that cabin class is "
    "all-or-nothing, then present only all-or-nothing options."
)
RETRY_ISSUE = (
    "tau2 runner retries Bedrock 429 with 60s exponential backoff, blocking the whole pipeline. "
    "Observed in airline + retail runs."
)


@pytest.fixture
def source() -> InsightSource:
    """A provenance record of one tau2 airline trace."""
    return InsightSource(
        source_system="tau2-airline",
        trace_id="task-7",
        sample_question="Upgrade my second leg to business",
        epoch=1,
        error_identification="agent offered a per-leg upgrade",
        learning_text="cabin class is all-or-nothing",
    )


@pytest.fixture
def skillbook() -> Skillbook:
    """One context skill (`context-00001`) and one harness skill without insight (`harness-00001`)."""
    book = Skillbook()
    book.add_skill("context", CABIN_ISSUE, ["airline", "booking_api", "cabin_class"], CABIN_INSIGHT)
    book.add_skill("harness", RETRY_ISSUE, ["tau2", "rate_limit", "retries"])
    return book
