"""The skillbook UI of `ace serve`, at `/ui` on the API's own port: server-rendered pages, no
script, no CDN (templates and the stylesheet ship in this package; see docs/ui.md).

    /ui                         the skillbook: filter, search, sort, paginate; counters as bars
    /ui/skills/{id}             one skill: text, counters over time, occurrence timeline, nearest skills
    /ui/match?task=...          the match playground: matches, near misses under the floor, the floor
    /ui/runs, /ui/runs/{name}   `ace-eval e2e` run folders under `--runs DIR`, and a run's report

`mount_ui(app, followed, options)` adds them to a FastAPI app (`ace.server.create_app` does).
The FastAPI parts are imported on first use of `mount_ui`, so `ace.server.ui.charts` imports
with pygal alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ._edits import LOOPBACK_NAMES, EditRefused
from ._errors import UiInputError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ace.serving import FollowedSkillbook

__all__ = ["LOOPBACK_NAMES", "EditRefused", "UiInputError", "UiOptions", "mount_ui"]


@dataclass(frozen=True)
class UiOptions:
    """What the UI offers besides reading the skillbook."""

    allow_edits: bool = False
    """Offer remove / activate on skill pages (POST, token- and origin-checked)."""
    runs_dir: Path | None = None
    """The folder whose sub-folders are `ace-eval e2e` runs listed at /ui/runs; None: no runs."""
    edit_hostnames: frozenset[str] = LOOPBACK_NAMES
    """Host names (lowercase, no port) an edit request may be addressed to."""
    edit_token: str | None = field(default=None, repr=False)
    """The token edit forms carry; None: a new random one for this process. Processes serving one
    address (`ace serve --workers`) share one, so a form from one worker is accepted by another."""


def mount_ui(
    app: FastAPI, followed: FollowedSkillbook, location: str | os.PathLike[str], display: str, options: UiOptions
) -> None:
    """Add the UI's routes, its stylesheet and `/` -> `/ui` to `app`.

    `followed` is the served skillbook (`current()`, `stale`, `matcher`), `location` the file or
    `postgresql://` URL edits write to, `display` how pages name it (no password).
    """
    from ._routes import mount

    mount(app, followed, location, display, options)
