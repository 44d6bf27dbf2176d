"""One redaction of secrets in connection strings, for every message, log line, error, report and
file name that may show a location.

`redact(text)` hides the password of every `scheme://user:password@host` URL in `text` (malformed
percent-escapes included: everything between `user:` and the token's last `@`) and the value of
every secret parameter libpq knows (`password`, `sslpassword`, `oauth_client_secret`), as URL query
parameters or `key=value` connection-string words. `redact(text, secrets)` also hides the given
secret strings wherever they appear (a driver's error may quote a password it failed to parse);
`url_secrets(url)` says which strings of a URL are secret.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import unquote

__all__ = ["MASK", "SECRET_PARAMETERS", "RedactSecrets", "redact", "url_secrets"]

MASK = "***"
"""What a secret is replaced with."""

SECRET_PARAMETERS = frozenset({"password", "sslpassword", "oauth_client_secret"})
"""libpq's connection parameters whose values are secrets (the ones it shows as `*` in debug output)."""

_USERINFO = re.compile(r"(?P<head>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*+://[^\s:/?#@]*+:)(?P<secret>\S*)@")
"""A URL's `scheme://user:` and its password. A scheme starts only where no scheme character stands
before it, and its runs are possessive: a long word (a 500,000-character task on the command line)
is scanned once, not once per position."""
_PARAMETER = re.compile(
    r"(?P<head>\b(?:" + "|".join(sorted(SECRET_PARAMETERS)) + r")\s*=\s*)"
    r"(?P<secret>'(?:[^'\\]|\\.)*'?|\"(?:[^\"\\]|\\.)*\"?|[^\s&'\"]*)",
    re.IGNORECASE,
)
_SHORTEST_SECRET = 3
"""Known secrets shorter than this are not searched for in free text (they would mask ordinary words)."""


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with URL passwords, secret parameter values and every string of `secrets` replaced by
    `MASK`."""
    for secret in sorted({s for s in secrets if len(s) >= _SHORTEST_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    text = _USERINFO.sub(lambda match: f"{match['head']}{MASK}@", text)
    return _PARAMETER.sub(lambda match: f"{match['head']}{MASK}" if match["secret"] else match[0], text)


def url_secrets(url: str) -> tuple[str, ...]:
    """The secret strings of a URL or connection string as written and percent-decoded: its userinfo
    password and the values of its secret parameters."""
    found: list[str] = []
    for match in _USERINFO.finditer(url):
        found.append(match["secret"])
    for match in _PARAMETER.finditer(url):
        found.append(match["secret"].strip("'\""))
    decoded = [unquote(secret) for secret in found]
    return tuple(dict.fromkeys(secret for secret in (*found, *decoded) if secret))


class RedactSecrets(logging.Filter):
    """A logging filter masking secrets (`redact`) in the record's message and in each of its
    string arguments, keeping their shape (formatters such as uvicorn's read the arguments)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: redact(arg) if isinstance(arg, str) else arg for key, arg in record.args.items()}
        return True
