"""The acceptance skills for matching (shared with tests/server).

Eight active skills in distinct domains and two inactive ones.

Deliberate conflicts (seed 003's "false pass" list): the glibc/musl skill's *insight* mentions
`kubectl` while its issue is about container images; two harness skills are described identically;
the inactive skills have issues that tasks repeat verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ace.retrieval.embedder import Embedder
from ace.skillbook import Skill, Skillbook

CRASHLOOP = "context-00001"
LOCKFILES = "context-00002"
INTEGER_DIVISION = "context-00003"
EXCEL_DATES = "context-00004"
MEETING_TIMEZONES = "context-00005"
GLIBC_MUSL = "context-00006"
HELM_PENDING = "context-00007"
PYTEST_UTC = "context-00008"
RATE_LIMIT = "harness-00001"
RATE_LIMIT_TWIN = "harness-00002"

HELM_ISSUE = (
    "helm upgrade fails with 'another operation (install/upgrade/rollback) is in progress' after a "
    "previous upgrade was interrupted, leaving the release stuck in pending-upgrade."
)
PYTEST_UTC_ISSUE = (
    "pytest suites that pass on developer laptops fail in GitHub Actions because the runner's "
    "timezone is UTC while developers run local time, breaking date-boundary assertions."
)
RATE_LIMIT_ISSUE = (
    "When many agent workers call the same LLM provider concurrently, requests fail with HTTP 429 "
    "rate-limit errors and the run aborts instead of slowing down."
)

_CONTEXT_SKILLS = [
    (
        "For pods in CrashLoopBackOff, kubectl logs shows the freshly restarted container, which often "
        "has no output yet, so the actual crash message appears to be missing.",
        ["k8s", "pod_debugging", "crashloopbackoff", "logs"],
        "Read the previous container's output with kubectl logs --previous and check the exit code in "
        "kubectl describe pod.",
    ),
    (
        "Rebasing or merging branches that both changed a dependency lockfile (package-lock.json, "
        "poetry.lock) produces conflicts that cannot be resolved correctly by hand-editing the file.",
        ["git", "merge_conflicts", "lockfiles"],
        "Take either side of the lockfile, then regenerate it with the package manager and commit it.",
    ),
    (
        "In Postgres and SQLite, dividing one integer column by another (clicks/impressions) performs "
        "integer division, so rates come out as 0 or truncated whole numbers.",
        ["sql", "integer_division", "ratios"],
        "Cast one operand to numeric or multiply by 1.0 before dividing.",
    ),
    (
        "Dates read from .xlsx files with pandas or openpyxl sometimes arrive as integers like 45231 "
        "(Excel serial day numbers), breaking date filters and monthly grouping.",
        ["spreadsheet", "excel", "dates"],
        "Convert serials with pd.to_datetime(value, unit='D', origin='1899-12-30').",
    ),
    (
        "Meetings requested with a bare local time ('Tuesday at 9') for attendees in different "
        "countries get created in the calendar API's default zone (often UTC), so they land hours off.",
        ["calendar", "scheduling", "timezones"],
        "Resolve the requester's time zone first and send an explicit IANA zone with the event.",
    ),
    (
        "Container images that install Python wheels in a Debian builder stage and run them on an "
        "Alpine (musl) runtime crash at import with 'Error relocating' or 'GLIBC_2.xx not found'.",
        ["python_packaging", "docker", "wheels", "glibc_musl"],
        "Build and run on the same libc family. When the image runs on Kubernetes, confirm with "
        "kubectl exec and kubectl get pods that the running image is the one you rebuilt.",
    ),
    (HELM_ISSUE, ["k8s", "helm", "release_state"], "Roll back to the last deployed revision, then upgrade."),
    (PYTEST_UTC_ISSUE, ["ci", "pytest", "timezone"], "Pin TZ in the workflow or freeze time in the tests."),
]


def build_acceptance_skillbook() -> Skillbook:
    """A fresh skillbook with the fixture skills; the helm and pytest/UTC skills soft-removed."""
    skillbook = Skillbook()
    for issue, keywords, insight in _CONTEXT_SKILLS:
        skillbook.add_skill("context", issue, keywords, insight=insight)
    for _ in range(2):
        skillbook.add_skill("harness", RATE_LIMIT_ISSUE, ["llm_provider", "rate_limit", "http_429"])
    skillbook.remove_skill(HELM_PENDING, "draft: not yet validated")
    skillbook.remove_skill(PYTEST_UTC, "draft: not yet validated")
    return skillbook


ROOM_BOOKING_TASK = "Book a meeting room for Friday's all-hands; the room booking API says the room is double-booked."
"""A task no acceptance skill applies to, until `add_room_booking_skill` adds the one that does."""


def add_room_booking_skill(skillbook: Skillbook) -> Skill:
    """Add the context skill that applies to ROOM_BOOKING_TASK and return it."""
    return skillbook.add_skill(
        "context",
        "Room booking APIs report 'double-booked' for rooms whose previous meeting ran over because "
        "cancelled recurring meetings still hold their room reservations.",
        ["calendar", "room_booking", "double_booked"],
        insight="Release rooms held by cancelled series before booking.",
    )


class CountingEmbedder:
    """Wraps a real embedder and records every batch of texts it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)
