"""`package_versions`: the Python and package versions a run report records, so a figure can be
traced to the code that produced it."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib import metadata

__all__ = ["package_versions"]


def package_versions(packages: Sequence[str]) -> dict[str, str | None]:
    """`python` and each of `packages` (distribution names) mapped to its installed version; None
    for a package that is not installed."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions
