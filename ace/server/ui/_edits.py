"""`ace serve --allow-edits`: remove and activate a skill from its page, and the checks a POST must
pass first.

A local tool's CSRF defence: every edit form carries a token made once per server process (a page
of another site cannot read it), the request's Host must name this machine (loopback names, or the
address the server was bound to: a DNS-rebinding page names its own host), and a browser's
`Origin` (and `Sec-Fetch-Site`, when sent) must say the form came from this server. Edits run like
`ace skillbook remove/activate`: under `Skillbook.locked(location)`, with a manual provenance
record of origin `ui` (the server's OS user, the reason given).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from os import PathLike
from typing import Literal
from urllib.parse import urlsplit

from ace.errors import AceError
from ace.skillbook import Skill, Skillbook, SkillbookError, manual_source
from ace.untrusted import UntrustedInputError, check_text, quote

__all__ = ["LOOPBACK_NAMES", "MAX_REASON_CHARS", "EditAction", "EditGuard", "EditRefused", "apply_edit"]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names that always reach the server from this machine."""

MAX_REASON_CHARS = 2000
"""Longest reason accepted with an edit."""

LOCK_TIMEOUT_SECONDS = 10.0
"""How long an edit waits for another writer's lock on the skillbook before giving up."""

EditAction = Literal["remove", "activate"]


class EditRefused(AceError):
    """An edit request that is not carried out: `status` is the HTTP status, the message says why
    and what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class EditGuard:
    """The per-process token and the host names an edit request may name."""

    hostnames: frozenset[str] = LOOPBACK_NAMES
    """Host names (no port) accepted in the Host header, lowercase."""
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    """The token every edit form carries; new for each server process."""

    def check(self, *, scheme: str, host: str | None, origin: str | None, fetch_site: str | None, token: str) -> None:
        """Raise `EditRefused` (403) unless the request names an accepted host, comes from this
        server's own pages (Origin, Sec-Fetch-Site) and carries the token."""
        hostname = urlsplit(f"//{host}").hostname if host else None
        if hostname not in self.hostnames:
            raise EditRefused(
                403,
                f"edits are accepted only through {', '.join(sorted(self.hostnames))}, "
                f"not Host {quote(host)}; open the UI through one of them",
            )
        if origin is not None and origin.lower() != f"{scheme}://{host}".lower():
            raise EditRefused(
                403, f"the form was sent from {quote(origin)}, not from this server; edit from the skill's page here"
            )
        if fetch_site is not None and fetch_site not in ("same-origin", "none"):
            raise EditRefused(
                403,
                f"the form was sent from another site (Sec-Fetch-Site {quote(fetch_site)}); "
                "edit from the skill's page here",
            )
        if not hmac.compare_digest(token.encode("utf-8", "replace"), self.token.encode("utf-8")):
            raise EditRefused(
                403,
                "the form's token is not this server's (it restarted, or the form is "
                "not from here); reload the skill's page and try again",
            )


def checked_reason(reason: str, action: EditAction) -> str | None:
    """The reason as recorded (stripped; None when blank). Raises `EditRefused` (400) for a blank
    reason to remove, one over `MAX_REASON_CHARS`, or one that is not valid Unicode."""
    try:
        check_text(reason, "reason")
    except UntrustedInputError as error:
        raise EditRefused(400, str(error)) from None
    reason = reason.strip()
    if len(reason) > MAX_REASON_CHARS:
        raise EditRefused(400, f"the reason is {len(reason):,} characters; say it in at most {MAX_REASON_CHARS:,}")
    if action == "remove" and not reason:
        raise EditRefused(400, "say why the skill is removed: the reason is recorded in its provenance")
    return reason or None


def apply_edit(location: str | PathLike[str], skill_id: str, action: EditAction, reason: str) -> Skill:
    """Remove (soft) or activate `skill_id` in the skillbook at `location` (a file or a
    `postgresql://` URL) and return the changed skill. Raises `EditRefused`: 400 for a bad
    reason, 404 for an unknown id, 409 when the skill is already in that state or the stored
    skillbook cannot be loaded, 503 when another writer holds the lock too long."""
    import filelock

    recorded = checked_reason(reason, action)
    source = manual_source("ui", reason=recorded)
    try:
        with Skillbook.locked(location, timeout=LOCK_TIMEOUT_SECONDS) as skillbook:
            skill = skillbook.get_skill(skill_id)
            if skill is None:
                raise EditRefused(404, f"the skillbook has no skill {quote(skill_id)} (any more); go back to the list")
            if skill.active == (action == "activate"):
                state = "active" if skill.active else "inactive"
                raise EditRefused(409, f"{skill_id} is already {state}; reload its page")
            if action == "remove":
                assert recorded is not None  # checked_reason refuses a blank reason to remove
                return skillbook.remove_skill(skill_id, recorded, insight_source=source)
            return skillbook.activate_skill(skill_id, insight_source=source)
    except filelock.Timeout:
        raise EditRefused(503, "another process is writing the skillbook; try again in a moment") from None
    except SkillbookError as error:
        raise EditRefused(
            409, f"the stored skillbook could not be loaded or saved ({error}); fix it and try again"
        ) from None
    except OSError as error:
        raise EditRefused(
            409, f"the skillbook could not be written ({error.strerror or error}); check the file"
        ) from None
