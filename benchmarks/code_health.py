"""The code-health figures of issue 24, read from the source tree as text (nothing is imported or run).

Usage: python benchmarks/code_health.py [--root DIR] [--pyright] [--duplicates]

Prints, for the packages `ace` and `ace_eval` under DIR (default: this checkout):
imports of another package's private module; import cycles between packages and between modules
(every import counts, also those inside functions; for module cycles, only imports that run); modules over
400 lines; functions over 60 lines;
places that decide the storage backend by looking at a location string; `Any` annotations.
`--pyright` adds the error count of `pyright` (basic mode) and `--duplicates` the pair count of
`duplicates` over the product code (both must be on PATH). Run it on two checkouts to compare.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from import_graph import PACKAGES, imports, modules, package_of, reaches_into_private

PRODUCT = tuple(f"{package}/" for package in PACKAGES)
MODULE_LINES = 400
FUNCTION_LINES = 60


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for successor in edges.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def _sniffs_location(node: ast.AST) -> bool:
    """A call that decides storage from a location string: `is_database_url(...)` or a scheme test."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name == "is_database_url":
        return True
    if name == "startswith":
        literals = [c.value for arg in node.args for c in ast.walk(arg) if isinstance(c, ast.Constant)]
        schemes = [
            n.id for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Name) and n.id.endswith("SCHEMES")
        ]
        return bool(schemes) or any(isinstance(value, str) and value.startswith("postgres") for value in literals)
    return False


def _is_any(annotation: ast.AST | None) -> int:
    if annotation is None:
        return 0
    return sum(1 for n in ast.walk(annotation) if isinstance(n, ast.Name) and n.id == "Any")


def _count_any(tree: ast.Module) -> int:
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                total += _is_any(arg.annotation)
            for arg in (arguments.vararg, arguments.kwarg):
                total += _is_any(arg.annotation if arg else None)
            total += _is_any(node.returns)
        elif isinstance(node, ast.AnnAssign):
            total += _is_any(node.annotation)
    return total


def _pyright_errors(root: Path) -> str:
    """pyright's error count: with the checkout's own [tool.pyright], else in basic mode over both packages."""
    command = ["pyright", "--outputjson"]
    with tempfile.TemporaryDirectory() as scratch:
        if "[tool.pyright]" not in (root / "pyproject.toml").read_text(encoding="utf-8"):
            settings = Path(scratch) / "pyrightconfig.json"
            settings.write_text(json.dumps({"typeCheckingMode": "basic", "extraPaths": [str(root)]}))
            command += ["--project", str(settings), *PACKAGES]
        result = subprocess.run(command, cwd=root, capture_output=True, text=True)
    try:
        return str(json.loads(result.stdout)["summary"]["errorCount"])
    except (ValueError, KeyError):
        return f"? ({result.stderr.strip()[:200]})"


def _duplicate_pairs(root: Path) -> str:
    """`duplicates` rows over the whole checkout: pairs within the product code, and product ~ tests."""
    out = subprocess.run(
        ["duplicates", "--repo", str(root), "--most", "200", "--seconds", "120"], capture_output=True, text=True
    ).stdout
    rows = [line.split() for line in out.splitlines() if re.match(r"D\d+ ", line)]
    in_product = [row for row in rows if row[1].startswith(PRODUCT) and row[3].startswith(PRODUCT)]
    with_tests = [
        row
        for row in rows
        if row[1].startswith(PRODUCT) != row[3].startswith(PRODUCT) and "tests/" in (row[1] + row[3])
    ]
    return f"{len(in_product)} within ace/ace_eval, {len(with_tests)} product ~ tests ({len(rows)} in all)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--pyright", action="store_true", help="also run pyright (basic) and count its errors")
    parser.add_argument("--duplicates", action="store_true", help="also count `duplicates` pairs in ace, ace_eval")
    parser.add_argument("--list", action="store_true", help="name each finding, not only the counts")
    args = parser.parse_args()
    root: Path = args.root.resolve()
    known = modules(root)

    private: dict[str, list[str]] = {}  # one entry per import statement
    sniffing: list[str] = []
    long_functions: list[str] = []
    long_modules: list[str] = []
    module_edges: dict[str, set[str]] = {name: set() for name in known}
    package_edges: dict[str, set[str]] = {}
    any_count = 0
    for path in known.values():
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        where = path.relative_to(root)
        lines = len(source.splitlines())
        if lines > MODULE_LINES:
            long_modules.append(f"{where} ({lines})")
        any_count += _count_any(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno:
                length = node.end_lineno - node.lineno + 1
                if length > FUNCTION_LINES:
                    long_functions.append(f"{where}:{node.lineno} {node.name} ({length})")
            if _sniffs_location(node):
                sniffing.append(f"{where}:{getattr(node, 'lineno', '?')}")
    for item in imports(root):
        if not item.type_only:  # a circle of imports that run; `if TYPE_CHECKING:` ones never do
            module_edges[item.importer].add(item.target)
        source_package, target_package = package_of(item.importer), package_of(item.target)
        if source_package != target_package:
            package_edges.setdefault(source_package, set()).add(target_package)
        if reaches_into_private(item):
            private.setdefault(f"{item.path.relative_to(root)}:{item.line}", []).append(item.name)

    package_cycles = _cycles(package_edges)
    module_cycles = _cycles(module_edges)
    rows = [
        (
            "imports of another package's private module",
            len(private),
            [f"{where} -> {', '.join(names)}" for where, names in private.items()],
        ),
        ("import cycles between packages", len(package_cycles), [" <-> ".join(c) for c in package_cycles]),
        (
            "import cycles between modules (imports that run)",
            len(module_cycles),
            [" <-> ".join(c) for c in module_cycles],
        ),
        (f"modules over {MODULE_LINES} lines", len(long_modules), long_modules),
        (f"functions over {FUNCTION_LINES} lines", len(long_functions), long_functions),
        ("location-string sniffing sites", len(sniffing), sniffing),
        ("`Any` annotations", any_count, []),
    ]
    print(f"code health of {root} ({len(known)} modules)")
    for label, count, details in rows:
        print(f"{label:<48} {count}")
        if args.list:
            for detail in details:
                print(f"    {detail}")
    if args.pyright:
        print(f"{'pyright (basic) errors':<48} {_pyright_errors(root)}")
    if args.duplicates:
        print(f"{'duplicates pairs':<48} {_duplicate_pairs(root)}")


if __name__ == "__main__":
    main()
