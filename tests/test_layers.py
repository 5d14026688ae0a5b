"""The house's rules, read from the source with ``ast`` over every top-level folder.

Imports flow one way, ``cli, api -> search -> ask, flows -> tasks -> verify -> storage -> ves``
(``verify``, the recipient's side of an export, takes only the span hash of ``storage``;
``synthetic`` beside ``ves``, below ``flows``; ``testkit`` under ``stress``, ``benchmarks`` and
``tests``; ``stress`` under ``benchmarks``); no import circle; no module imports another module's
``_private`` name; a stage imports shared modules and earlier stages only; a route imports no
other route. Every import counts, also inside functions, so a new module that breaks a rule fails
here with the import named.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("ves", "synthetic", "storage", "verify", "tasks", "flows", "ask", "search", "api", "cli")
KITS = ("testkit", "stress", "benchmarks", "docs", "tests")
FOLDERS = (*PRODUCT, *KITS)
# What each top-level folder may import of the project (itself always).
ALLOWED: dict[str, set[str]] = {
    "ves": set(),
    "synthetic": {"ves", "tasks.geometry"},  # the scorer measures boxes as the pipeline does
    "storage": {"ves"},
    # The recipient's side of an export (``ves verify``): the kernel and the span hash, nothing
    # of the service (no Prefect, catalog, blob store, nor the bundle's maker in tasks/export/).
    "verify": {"ves", "storage.artifacts.spans"},
    "tasks": {"storage", "verify", "ves"},  # verify: the bundle format the export writes
    "flows": {"tasks", "storage", "ves", "synthetic"},  # synthetic: the demo clip only
    "ask": {"tasks", "storage", "ves"},
    "search": {"ask", "storage", "ves"},  # free text is read by Ask's intent reader
    "api": {"ask", "search", "flows", "tasks", "storage", "verify", "ves"},
    "cli": {"flows", "tasks", "storage", "verify", "ves"},
    "testkit": set(PRODUCT),
    "stress": {*PRODUCT, "testkit"},
    "benchmarks": {*PRODUCT, "testkit", "stress"},  # stress.load's readers: a scrape's cost
    "docs": set(PRODUCT),  # the reference pages are rendered from the code
    "tests": set(FOLDERS),
}
# The order a stage may import in (each imports only those before it): the flow order of
# tasks/__init__.py, except activity, which runs before sample but borrows sample's gate and
# detect's motion test, so it ranks after detect here.
STAGES = (
    "decode",
    "sample",
    "detect",
    "activity",  # runs after decode, before sample: see the note above
    "chunk",
    "review",  # the review copy, after detect: the source is still on the worker's disk
    "track",
    "world_state",
    "timeline",
    "evidence",
    "cost",
    "export",
)
SHARED = ("detections", "geometry", "context", "options", "retention", "mp4")


def _name_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def modules() -> Iterator[tuple[str, Path]]:
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield _name_of(path), path


ALL = dict(modules())


def imported(path: Path) -> list[tuple[str, str | None]]:
    """Every ``(module, name)`` a file imports of the project; ``name`` None for ``import m``."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, alias.name) for alias in node.names]
    return [(m, n) for m, n in found if m.split(".")[0] in FOLDERS]


def imports_of(path: Path) -> set[str]:
    """The dotted names a file imports: each module, and each ``module.name`` taken from one."""
    names = set()
    for module, name in imported(path):
        names.add(module)
        if name is not None:
            names.add(f"{module}.{name}")
    return names


def targets_of(path: Path) -> set[str]:
    """The project modules a file depends on (``from m import sub`` names module ``m.sub``)."""
    found = set()
    for module, name in imported(path):
        child = f"{module}.{name}"
        found.add(child if child in ALL else module)
    return {m for m in found if m in ALL}


def _allowed(folder: str, name: str) -> bool:
    return any(name == rule or name.startswith(f"{rule}.") for rule in ALLOWED[folder] | {folder})


def test_every_folder_with_python_is_placed_in_the_layers() -> None:
    folders = {p.relative_to(ROOT).parts[0] for p in ROOT.glob("*/**/*.py")}
    assert folders - {".venv", "site", "data"} <= set(FOLDERS)


@pytest.mark.parametrize("folder", [f for f in FOLDERS if (ROOT / f / "__init__.py").exists()])
def test_every_top_level_folder_says_its_purpose(folder: str) -> None:
    doc = ast.get_docstring(ast.parse((ROOT / folder / "__init__.py").read_text()))
    assert doc and doc.splitlines()[0].strip(), f"{folder}/__init__.py has no one-line purpose"


def test_the_tree_is_where_the_layout_says() -> None:
    for stage in STAGES:
        assert (ROOT / "tasks" / stage / "stage.py").is_file(), stage
    flat = {p.stem for p in (ROOT / "tasks").glob("*.py")} - {"__init__"}
    assert flat == set(SHARED)
    tasks_doc = ast.get_docstring(ast.parse((ROOT / "tasks" / "__init__.py").read_text())) or ""
    assert all(f"{stage}/" in tasks_doc for stage in STAGES), "tasks/__init__.py omits a stage"


@pytest.mark.parametrize("module", sorted(ALL))
def test_no_import_points_up_the_layers(module: str) -> None:
    folder = module.split(".")[0]
    wrong = {name for name in imports_of(ALL[module]) if not _allowed(folder, name)}
    # ``from tasks import geometry`` names the package; its ``.geometry`` form is the rule's.
    wrong = {
        n for n in wrong if not any(m.startswith(f"{n}.") and _allowed(folder, m) for m in wrong)
    }
    assert not wrong, f"{module} imports {sorted(wrong)}"


@pytest.mark.parametrize("module", sorted(ALL))
def test_no_module_imports_another_modules_private_name(module: str) -> None:
    private = {
        f"{source}.{name}"
        for source, name in imported(ALL[module])
        if name is not None
        and name.startswith("_")
        and not name.startswith("__")
        and source != module
    }
    assert not private, f"{module} imports private names {sorted(private)}"


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles_anywhere() -> None:
    graph = {name: targets_of(path) - {name} for name, path in ALL.items()}
    assert _circles(graph) == []


def test_the_circle_check_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


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
        assert own is not None, f"{module} is shared by stages, yet imports the stage {name}"
        assert STAGES.index(other) < STAGES.index(own), f"{module} imports {name}"


@pytest.mark.parametrize("module", sorted(m for m in ALL if m.startswith("api.")))
def test_no_route_imports_another_route_and_tools_import_none(module: str) -> None:
    routes = {n for n in imports_of(ALL[module]) if n.startswith("api.routes.")}
    if module.startswith("api.routes.") or module == "api.mcp_tools":
        assert not routes, f"{module} imports {sorted(routes)}"


def test_the_layer_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from storage.catalog import Catalog\n    import api.app\n")
    assert imports_of(source) == {"storage.catalog", "storage.catalog.Catalog", "api.app"}


# What a recipient's ``ves verify`` must not load: the service's orchestrator, SQL and tables,
# web framework, and the project's rooms above the verifier.
NOT_FOR_THE_RECIPIENT = (
    "prefect",
    "sqlalchemy",
    "duckdb",
    "pyarrow",
    "fastapi",
    "tasks",
    "flows",
    "api",
    "ask",
    "search",
    "storage.catalog",
    "storage.artifacts.blobs",
)


def test_the_verifier_loads_nothing_of_the_service() -> None:
    """Issue 45: verifying a bundle is a room of its own that imports only what it needs; this
    imports every module of ``verify/`` in a fresh interpreter and names what else came along."""
    names = sorted(m for m in ALL if m == "verify" or m.startswith("verify."))
    code = (
        "import importlib, json, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout)
    wrong = {
        m for m in loaded for bad in NOT_FOR_THE_RECIPIENT if m == bad or m.startswith(f"{bad}.")
    }
    assert len(names) > 5 and "verify.bundle" in loaded
    assert not wrong, f"verify/ loads {sorted(wrong)}"


def splits_a_mode(path: Path) -> list[int]:
    """The lines of ``path`` that split a string on ``"+"``: a detector mode written out."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "split"
        and [getattr(a, "value", None) for a in node.args] == ["+"]
    ]


def test_a_detector_mode_is_split_in_one_place_only() -> None:
    """``ves/detector_mode.py`` owns the mode string (issue 45): nothing else splits it by hand."""
    owner = "ves.detector_mode"
    elsewhere = {name: splits_a_mode(path) for name, path in ALL.items() if name != owner}
    assert {name: lines for name, lines in elsewhere.items() if lines} == {}
    assert splits_a_mode(ALL[owner]), "the owner's own split was not found: the check is blind"
