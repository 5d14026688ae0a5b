"""Imports flow one way: ``cli, api -> ask, flows -> tasks -> storage -> ves``.

Read from the source with ``ast`` (every import, also inside functions), so a new module that
points up the layers fails here, with the import named.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ves", "synthetic", "storage", "tasks", "flows", "ask", "api", "cli")
# What each top-level package may import of the project (itself always).
ALLOWED = {
    "ves": set(),
    "synthetic": {"ves", "tasks"},
    "storage": {"ves"},
    "tasks": {"storage", "ves"},
    "flows": {"tasks", "storage", "ves", "synthetic"},
    "ask": {"tasks", "storage", "ves"},
    "api": {"ask", "flows", "tasks", "storage", "ves"},
    "cli": {"flows", "tasks", "storage", "ves"},
}
STAGES = (
    "decode",
    "sample",
    "detect",
    "chunk",
    "track",
    "world_state",
    "timeline",
    "evidence",
    "cost",
    "export",
)
SHARED = ("detections", "geometry", "context", "options", "retention")
# Shared modules may read the detector mode, a value with no dependencies of its own.
SHARED_MAY_READ = {"tasks.detect.detectors.mode"}


def modules() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(p for p in parts if p != "__init__"), path


def imports_of(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in PACKAGES}


ALL = dict(modules())


def test_the_tree_is_where_the_layout_says() -> None:
    for stage in STAGES:
        assert (ROOT / "tasks" / stage / "stage.py").is_file(), stage
    flat = {p.stem for p in (ROOT / "tasks").glob("*.py")} - {"__init__"}
    assert flat == set(SHARED)


@pytest.mark.parametrize("module", sorted(ALL))
def test_no_import_points_up_the_layers(module: str) -> None:
    package = module.split(".")[0]
    wrong = {
        name
        for name in imports_of(ALL[module])
        if name.split(".")[0] not in ALLOWED[package] | {package}
    }
    assert not wrong, f"{module} imports {sorted(wrong)}"


def _stage_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "tasks" and parts[1] in STAGES else None


@pytest.mark.parametrize("module", sorted(m for m in ALL if m.startswith("tasks")))
def test_a_stage_imports_shared_modules_and_earlier_stages_only(module: str) -> None:
    own = _stage_of(module)
    for name in imports_of(ALL[module]):
        other = _stage_of(name)
        if other is None or other == own:
            continue
        if own is None:
            assert any(name.startswith(m) for m in SHARED_MAY_READ), f"{module} imports {name}"
        else:
            assert STAGES.index(other) < STAGES.index(own), f"{module} imports {name}"


@pytest.mark.parametrize("module", sorted(m for m in ALL if m.startswith("api.")))
def test_no_route_imports_another_route_and_tools_import_none(module: str) -> None:
    routes = {n for n in imports_of(ALL[module]) if n.startswith("api.routes.")}
    if module.startswith("api.routes.") or module == "api.mcp_tools":
        assert not routes, f"{module} imports {sorted(routes)}"


def test_the_layer_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "def f():\n    from storage.catalog.database import Catalog\n    import api.app\n"
    )
    assert imports_of(source) == {
        "storage.catalog.database",
        "storage.catalog.database.Catalog",
        "api.app",
    }


def _private_names(path: Path) -> set[str]:
    """``module.name`` of every ``_private`` name ``path`` imports from another module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
            continue
        if node.module.split(".")[0] in PACKAGES:
            found |= {
                f"{node.module}.{alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            }
    return found


@pytest.mark.parametrize("module", sorted(ALL))
def test_no_module_imports_another_modules_private_name(module: str) -> None:
    """Seams are public: a helper two modules share gets a public name where it is owned."""
    assert not _private_names(ALL[module]), (
        f"{module} imports {sorted(_private_names(ALL[module]))}"
    )


def _graph() -> dict[str, set[str]]:
    """Which modules each module imports (at module level or inside functions)."""
    return {
        module: {name for name in imports_of(path) if name in ALL and name != module}
        for module, path in ALL.items()
    }


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while (top := stack.pop()) != node:
                group.append(top)
            if group:
                found.append(sorted([node, *group]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    """No two modules import each other, directly or around a loop (imports inside functions
    count: a circle hidden in a function is still a circle)."""
    assert _circles(_graph()) == []


def test_the_circle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
