"""The import graph of `ace` and `ace_eval`, read from the source as text (nothing is imported).

Used by tests/test_architecture.py (the layers and the private-module rule) and by
benchmarks/code_health.py (the figures). Every import counts: module level, inside functions, and
under `if TYPE_CHECKING:` alike, since each one couples two modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("ace", "ace_eval")
REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Import:
    """One imported name: `importer` imports `name`, found in module `target` (one of ours)."""

    importer: str
    """The dotted name of the importing module."""
    path: Path
    """The importing module's file."""
    line: int
    name: str
    """The dotted name as imported, relative imports resolved (`ace.skillbook._skill.match_text`)."""
    target: str
    """The module of ours it resolves to (the longest known prefix of `name`)."""
    type_only: bool = False
    """Whether the import sits under `if TYPE_CHECKING:` (it couples the modules, but runs never)."""


def modules(root: Path = REPO_ROOT) -> dict[str, Path]:
    """Every module of the packages under `root`, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(root: Path = REPO_ROOT) -> Iterator[Import]:
    """Every import of one of our modules by another, in file order."""
    known = modules(root)
    for importer, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = _type_checking_lines(tree)
        for name, line in _imported_names(importer, tree, path.name == "__init__.py"):
            target = _longest_known_prefix(name, known)
            if target is not None and target != importer:
                yield Import(importer, path, line, name, target, line in type_only)


def package_of(module: str) -> str:
    """The first-level package a module belongs to (`ace.skillbook._skill` -> `ace.skillbook`);
    a top-level module is its own (`ace.errors`)."""
    return ".".join(module.split(".")[:2])


def private_owner(name: str) -> str | None:
    """The package that owns the first private part of a dotted name (`a.b._c.d` -> `a.b`), or None
    when no part is private."""
    parts = name.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def reaches_into_private(item: Import) -> bool:
    """Whether the import names another package's private module (or a private name in it)."""
    owner = private_owner(item.name)
    inside = owner is not None and (item.importer == owner or item.importer.startswith(owner + "."))
    return owner is not None and owner.split(".")[0] in PACKAGES and not inside


def _imported_names(module: str, tree: ast.Module, is_package: bool) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """The lines inside `if TYPE_CHECKING:` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _longest_known_prefix(name: str, known: dict[str, Path]) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None
