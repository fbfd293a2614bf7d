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
REPORTED_LINES = 400  # a module past this is listed, so a reader sees it grow
MAX_LINES = 600  # past this it fails: a cohesive module (one write protocol, one detector table) may pass 400
MAX_DUPLICATE_PAIRS = 7  # half of the 14 pairs counted when the proxy was written
TEST_FOLDERS = ("tests/", "client-ts/test/")  # the Python tests; the TypeScript client's own
# Folders never read: the virtualenvs (.venv, .venv-sam, .venv-checkov, .venv-strands...), build output, the tests.
SKIPPED = {".aws-sam", ".cache", ".git", "node_modules", "tests"}
# Import roots (the folder on sys.path) and the packages whose cycles count.
PACKAGES = {"agent_memory": ROOT / "layers" / "shared", "local": ROOT, "bench": ROOT}
LAYER = "agent_memory"
# The layer's folders, inside out: a module may import its own folder's modules and those of a folder ranked
# at or below its own, never above (the edges call the use cases, never the reverse). A module outside every
# folder here (the composition root aside) fails the check, so a new folder has to say where it stands.
LAYERS = {
    "basics": 0,
    "domain": 1,
    "storage": 2,
    "search": 2,
    "providers": 2,
    "memory": 3,
    "recall": 3,
    "consolidation": 3,
    "people": 3,
    "edges": 5,
}
# The composition root builds the object graph from the settings: above the use cases, and only the edges
# (which hand its services to the routes) may import it.
COMPOSITION = f"{LAYER}.bootstrap"
COMPOSITION_RANK = 4


def _skipped(folders: tuple[str, ...]) -> bool:
    return any(folder in SKIPPED or folder.startswith(".venv") for folder in folders)


def source_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not _skipped(path.relative_to(ROOT).parts[:-1]) and not path.name.startswith("test_")
    )


def oversized(files: Iterable[Path], bound: int) -> list[tuple[str, int]]:
    sizes = ((str(path.relative_to(ROOT)), len(path.read_text().splitlines())) for path in files)
    return sorted(((name, lines) for name, lines in sizes if lines > bound), key=lambda item: -item[1])


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
    """Every import, at the top, inside a function or under ``if TYPE_CHECKING:``: a cycle of type-only imports
    still ties the two modules together for a reader (and for the next import that is no longer type-only)."""
    modules = {name: path for path in files if (name := module_name(path))}
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
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


def layer_of(module: str) -> str | None:
    """The folder of the layer a module sits in (``agent_memory.recall.indexer``: ``recall``)."""
    parts = module.split(".")
    return parts[1] if parts[0] == LAYER and len(parts) > 2 and parts[1] in LAYERS else None


def rank_of(module: str) -> int | None:
    folder = layer_of(module)
    return COMPOSITION_RANK if module == COMPOSITION else None if folder is None else LAYERS[folder]


def layer_order() -> str:
    """``basics < domain < storage, search, providers < ...``: the ranks as a reader sees them."""
    ranks = {**LAYERS, COMPOSITION.rpartition(".")[2]: COMPOSITION_RANK}
    return " < ".join(", ".join(n for n in ranks if ranks[n] == r) for r in sorted(set(ranks.values())))


def unplaced(graph: dict[str, set[str]]) -> list[str]:
    """The layer's modules in no folder of ``LAYERS`` (its ``__init__`` and the composition root aside)."""
    return sorted(
        module
        for module in graph
        if module.startswith(f"{LAYER}.")
        and module != COMPOSITION
        and layer_of(module) is None
        and module.count(".") >= 1
        and module.split(".")[1] not in LAYERS
    )


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports that reach a folder ranked above the importer's: an edge or the composition from a use case, say."""
    crossing = []
    for module, targets in graph.items():
        source = rank_of(module)
        if source is None:
            continue
        for target in targets:
            rank = rank_of(target)
            if rank is not None and rank > source:
                crossing.append((module, target))
    return sorted(crossing)


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

    long = oversized(files, REPORTED_LINES)
    big = oversized(files, MAX_LINES)
    print(f"proxy: modules over {REPORTED_LINES} lines outside tests: {len(long)} (listed)")
    print(f"proxy: modules over {MAX_LINES} lines outside tests: {len(big)} (bound 0)")
    for name, lines in long:
        print(f"  {name}: {lines} lines")
    failed |= bool(big)

    graph = import_graph(files)
    loops = cycles(graph)
    print(f"proxy: import cycles in {', '.join(PACKAGES)}: {len(loops)} (bound 0)")
    for loop in loops:
        print(f"  {' <-> '.join(loop)}")
    failed |= bool(loops)

    outside = unplaced(graph)
    print(f"proxy: layer modules outside the layer's folders: {len(outside)} (bound 0)")
    for module in outside:
        print(f"  {module}")
    failed |= bool(outside)

    crossing = upward_imports(graph)
    print(f"proxy: imports of a higher layer ({layer_order()}): {len(crossing)} (bound 0)")
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
