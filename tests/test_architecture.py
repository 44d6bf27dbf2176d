"""The layers of docs/architecture.md, enforced: a module imports only from its own package or from
a package of a lower layer, and never another package's private module."""

from __future__ import annotations

import pytest
from import_graph import Import, imports, modules, package_of, reaches_into_private

LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer.split())
    for layer in (
        "ace ace.errors ace.lazy_exports",
        "ace.untrusted ace.tracing ace.atomic_write ace.redaction",
        "ace.pipeline ace.skillbook ace.models",
        "ace.retrieval ace.agentic ace.traces",
        "ace.roles ace.deduplication",
        "ace.steps",
        "ace.runners",
        "ace.serving",
        "ace.server ace.mcp",
        "ace.cli",
        "ace_eval ace_eval.scripted ace_eval.span_export ace_eval.stats ace_eval.phases ace_eval.versions ace_eval.html_report",
        "ace_eval.spans ace_eval.tau2 ace_eval.role_models",
        "ace_eval.e2e",
        "ace_eval.bench",
        "ace_eval.cli",
    )
)
"""Lowest first; docs/architecture.md says what each package is for. Packages of one layer do not
import each other. The root packages `ace` and `ace_eval` sit at the bottom: their `__init__`
defines `__version__` and names the public API lazily (`ace.lazy_exports`), importing nothing."""

FACADES = frozenset({"ace", "ace_eval"})
"""Root packages whose `__init__` may name anything: it imports lazily, on first use."""


def _layer(package: str) -> int:
    return next(index for index, layer in enumerate(LAYERS) if package in layer)


def _package(module: str) -> str:
    return module if module in FACADES else package_of(module)


def test_every_package_has_a_layer() -> None:
    packages = {_package(module) for module in modules()}
    placed = set().union(*LAYERS)

    assert sorted(packages - placed) == []


def test_no_module_imports_a_package_of_its_own_or_a_higher_layer() -> None:
    def upward(item: Import) -> bool:
        source, target = _package(item.importer), _package(item.target)
        if source == target or item.importer in FACADES:
            return False
        return _layer(target) >= _layer(source)

    found = sorted(f"{item.importer} -> {item.name}" for item in imports() if upward(item))

    assert found == []


def test_no_module_imports_another_packages_private_module() -> None:
    found = sorted(f"{item.importer} -> {item.name}" for item in imports() if reaches_into_private(item))

    assert found == []


@pytest.mark.parametrize(
    ("importer", "name", "private"),
    [
        ("ace.cli.serve", "ace.server._access_log.access_log_config", True),
        ("ace.server.app", "ace.server._inputs.MAX_TASK_CHARS", False),
        ("ace.server.ui._routes", "ace.server._inputs.MAX_LIMIT", False),
        ("ace.skillbook.storage._file", "ace.skillbook._state.SkillbookState", False),
        ("ace.mcp._server", "ace.skillbook.storage._location.open_store", True),
        ("ace.cli.match", "ace.skillbook.Skillbook", False),
    ],
)
def test_the_private_rule_tells_a_package_s_own_private_modules_from_another_s(
    importer: str, name: str, private: bool
) -> None:
    from pathlib import Path

    item = Import(importer, Path("x.py"), 1, name, name.rsplit(".", 1)[0])

    assert reaches_into_private(item) is private
