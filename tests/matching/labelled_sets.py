"""Labelled matching sets stored in the tuning set's JSON shape (`tests/data/matching/*.json`):
`{"skills": [{"id", "section", "keywords", "issue", "insight", "active"}], "tasks": [{"id", "task",
"gold", "category"}]}`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ace.skillbook import Skillbook

_STAMP = "2026-01-01T00:00:00+00:00"


@dataclass(frozen=True)
class LabelledSet:
    """A skillbook and the tasks labelled against it."""

    skillbook: Skillbook
    """The set's skills, with the file's ids; drafts are inactive."""
    tasks: list[dict]
    """Each `{"id", "task", "gold", "category"}`; `gold` lists the ids to inject, best first."""
    skills: list[dict]
    """The skills as written in the file."""

    @property
    def inactive_ids(self) -> frozenset[str]:
        """Ids of the set's inactive (draft) skills."""
        return frozenset(skill["id"] for skill in self.skills if not skill["active"])


def load_labelled_set(path: Path) -> LabelledSet:
    """Read `path` (the tuning set's shape) into a `LabelledSet`."""
    data = json.loads(path.read_text())
    skills = {skill["id"]: {**skill, "created_at": _STAMP, "updated_at": _STAMP} for skill in data["skills"]}
    skillbook = Skillbook.from_dict({"schema_version": "2", "skills": skills})
    return LabelledSet(skillbook, data["tasks"], data["skills"])
