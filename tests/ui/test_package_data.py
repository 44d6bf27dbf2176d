"""The UI's templates and static files, and report.html's template, ship in a non-editable install:
every such file is named by `[tool.setuptools.package-data]` in pyproject.toml."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSET_FOLDERS = ["ace/server/ui/templates", "ace/server/ui/static", "ace_eval/templates"]


def test_every_template_and_static_file_is_package_data():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    unshipped = []
    for folder in ASSET_FOLDERS:
        package, _, _ = folder.partition("/")
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT / package).as_posix()
            if path.is_file() and not any(fnmatch.fnmatch(relative, pattern) for pattern in package_data[package]):
                unshipped.append(relative)
    assert unshipped == []
    assert (ROOT / "ace/server/ui/templates/base.html").exists()
