"""Structure checks printed by ``make lint``: module size, import cycles, the layer's edges, duplicated code.

Each line says what was measured and its bound; every one over its bound fails the run. The ``duplicates``
check runs where the command is installed (the developers' machines and CI) and is skipped elsewhere.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 400
MAX_DUPLICATE_PAIRS = 7  # half of the 14 pairs counted when the proxy was written
TEST_FOLDERS = ("tests/", "client-ts/test/")  # the Python tests; the TypeScript client's own
SKIPPED = {".venv", ".venv-sam", ".venv-checkov", ".aws-sam", ".cache", ".git", "node_modules", "tests"}
# Import roots (the folder on sys.path) and the packages whose cycles count.
PACKAGES = {"agent_memory": ROOT / "layers" / "shared", "local": ROOT, "bench": ROOT}
LAYER = "agent_memory"
# The layer's edges (outside shapes: requests, responses, HTTP, tokens, the tool catalog, Lambda events):
# the ``edges`` package and what is below it.
EDGE_MODULES = {f"{LAYER}.edges"}
# The use cases: what the edges call. None of them may import an edge module.
USE_CASE_MODULES = {
    f"{LAYER}.{name}"
    for name in (
        "service",
        "flush",
        "scope",
        "consolidation",
        "consolidation_queue",
        "recall",
        "indexer",
        "reindex",
        "compression",
        "management",
        "people",
        "injections",
    )
}


def source_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not SKIPPED.intersection(path.relative_to(ROOT).parts[:-1]) and not path.name.startswith("test_")
    )


def oversized(files: Iterable[Path]) -> list[tuple[str, int]]:
    sizes = ((str(path.relative_to(ROOT)), len(path.read_text().splitlines())) for path in files)
    return sorted(((name, lines) for name, lines in sizes if lines > MAX_LINES), key=lambda item: -item[1])


def module_name(path: Path) -> str | None:
    for package, root in PACKAGES.items():
        if (root / package) in path.parents:
            parts = path.relative_to(root).with_suffix("").parts
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return None


def imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The known modules an import statement loads (a ``from package import submodule`` counts the submodule)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    found = set()
    for name in names:
        while name and name not in known:  # ``import a.b.c`` loads a.b.c, or the deepest known parent
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def import_graph(files: Iterable[Path]) -> dict[str, set[str]]:
    """Every import, at the top or inside a function; those under ``if TYPE_CHECKING:`` never run, so not counted."""
    modules = {name: path for path in files if (name := module_name(path))}
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        type_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in type_only:
                edges |= imported(node, name, path.name == "__init__.py", known)
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), a package and its own modules aside."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _under(module: str, packages: set[str]) -> bool:
    return any(module == package or module.startswith(f"{package}.") for package in packages)


def edge_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Use-case modules of the layer that import one of its edge modules."""
    return sorted(
        (module, target)
        for module, targets in graph.items()
        if _under(module, USE_CASE_MODULES)
        for target in targets
        if _under(target, EDGE_MODULES)
    )


def duplicate_pairs() -> tuple[int, list[str]] | None:
    """Pairs that ``duplicates`` finds with neither side in a test folder; None when the command is not installed."""
    command = shutil.which("duplicates")
    if command is None:
        return None
    output = subprocess.run(
        [command, "--most", "200", "--seconds", "60"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout
    rows = [line for line in output.splitlines() if re.match(r"^D\d+ ", line)]
    outside = [row for row in rows if not any(side.startswith(TEST_FOLDERS) for side in row.split()[1:4:2])]
    return len(outside), outside


def main() -> int:
    failed = False
    files = source_files()

    big = oversized(files)
    print(f"proxy: modules over {MAX_LINES} lines outside tests: {len(big)} (bound 0)")
    for name, lines in big:
        print(f"  {name}: {lines} lines")
    failed |= bool(big)

    graph = import_graph(files)
    loops = cycles(graph)
    print(f"proxy: import cycles in {', '.join(PACKAGES)}: {len(loops)} (bound 0)")
    for loop in loops:
        print(f"  {' <-> '.join(loop)}")
    failed |= bool(loops)

    crossing = edge_imports(graph)
    print(f"proxy: use-case modules importing an edge module: {len(crossing)} (bound 0)")
    for module, target in crossing:
        print(f"  {module} -> {target}")
    failed |= bool(crossing)

    duplicates = duplicate_pairs()
    if duplicates is None:
        print("proxy: duplicates pairs outside tests: skipped (the `duplicates` command is not installed)")
    else:
        count, rows = duplicates
        print(f"proxy: duplicates pairs outside tests: {count} (bound {MAX_DUPLICATE_PAIRS})")
        for row in rows:
            print(f"  {row}")
        failed |= count > MAX_DUPLICATE_PAIRS

    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
