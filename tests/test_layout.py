"""The house rules of the code layout, read from the source itself (no imports executed):

- one ``citeaudit/<stage>/`` package per stage, named as its ``assets/<stage>.py`` module and, when
  it has SQL, its ``sql/<stage>/`` folder;
- no import circle between modules, counting imports inside functions too;
- a stage imports foundations and earlier stages only, and a foundation imports no stage;
- the archive is three rooms (``citeaudit/archive/index``, ``capture``, ``lookup``): code outside
  a room imports only the names its ``__init__`` exports, and no archive module imports another
  module's ``_private`` name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
PACKAGES = ("citeaudit", "assets", "pipelines")
# Stages in pipeline order: a stage may import only the stages before it.
STAGES = ("ingest", "archive", "citations", "alignment", "support", "scholarly", "source_risk",
          "metrics", "comparisons", "report")
# Foundations that stages build on: they may not import any stage.
CORE = ("codebook", "config", "duck", "parquet_io", "layout", "catalog", "stats", "storage",
        "untrusted", "safe_text")
# The outer shell (command line, adapters of external data, the demo generator): may import
# stages, but no stage may import it.
SHELL = ("cli", "ops_cli", "imports", "demo_corpus")
# The archive's rooms: reading WARC/ARC/WACZ into the capture index, capturing pages (live or
# from web archives), asking public archives and replaying. Each exports its API in __all__.
ARCHIVE = PROJECT / "citeaudit" / "archive"
ROOMS = ("index", "capture", "lookup")
# Checked for room imports: the library, the Dagster layer and the benchmarks (tests may open a
# room's modules to test them from the inside).
ROOM_CLIENTS = ("citeaudit", "assets", "pipelines", "benchmarks")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((PROJECT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules ``name`` imports anywhere in its file (``from pkg import mod`` counts as
    importing ``pkg.mod`` when that is a module, else ``pkg``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            subs = [f"{module}.{a.name}" for a in node.names]
            targets = [s for s in subs if s in known] or [module]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {name: _imports(name, path, known) for name, path in mods.items()}


def _part(module: str) -> str | None:
    """The top-level part of ``citeaudit`` a module belongs to (``citeaudit.archive.index`` ->
    ``archive``), or None for modules outside the library."""
    parts = module.split(".")
    return parts[1] if parts[0] == "citeaudit" and len(parts) > 1 else None


def test_every_stage_has_its_package_assets_module_and_sql_folder() -> None:
    for stage in STAGES:
        assert (PROJECT / "citeaudit" / stage / "__init__.py").is_file(), stage
        assert (PROJECT / "assets" / f"{stage}.py").is_file(), stage
        doc = ast.get_docstring(ast.parse(
            (PROJECT / "citeaudit" / stage / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "Writes" in doc or stage == "report", f"{stage}: say which tables it writes"
    for folder in (PROJECT / "sql").iterdir():
        assert folder.name in STAGES, f"sql/{folder.name} is not a stage"
    top = {p.stem for p in (PROJECT / "citeaudit").glob("*.py")} - {"__init__"}
    assert top <= set(CORE) | set(SHELL), f"stray top-level modules: {top - set(CORE + SHELL)}"


def test_no_import_circles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_stages_import_foundations_and_earlier_stages_only() -> None:
    wrong = []
    for module, deps in sorted(_graph().items()):
        part = _part(module)
        for dep in sorted(deps):
            target = _part(dep)
            if dep.split(".")[0] != "citeaudit" and module.split(".")[0] == "citeaudit" \
                    and part not in SHELL:
                wrong.append(f"{module} -> {dep} (the library imports no Dagster layer)")
            if target is None or target == part:
                continue
            if part in STAGES and target in STAGES and STAGES.index(target) > STAGES.index(part):
                wrong.append(f"{module} -> {dep} (a later stage)")
            if part in STAGES + CORE and target in SHELL:
                wrong.append(f"{module} -> {dep} (the command-line shell)")
            if part in CORE and target in STAGES:
                wrong.append(f"{module} -> {dep} (a foundation importing a stage)")
    assert not wrong, "\n".join(wrong)


def _exports(room: str) -> set[str]:
    """The names ``citeaudit/archive/<room>/__init__.py`` lists in ``__all__``."""
    tree = ast.parse((ARCHIVE / room / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def test_the_archive_has_three_rooms_with_exports() -> None:
    for room in ROOMS:
        init = ARCHIVE / room / "__init__.py"
        assert init.is_file(), f"citeaudit/archive/{room}/ is missing"
        exports = _exports(room)
        assert exports, f"citeaudit/archive/{room}/__init__.py lists no __all__"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        bound = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom)
                 for a in n.names}
        assert exports <= bound, f"{room}: __all__ names what it does not import: " \
            f"{sorted(exports - bound)}"
        assert ast.get_docstring(tree), f"{room}: say what the room does"
    loose = sorted(p.name for p in ARCHIVE.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"archive modules outside the rooms: {loose}"
    folders = sorted(p.name for p in ARCHIVE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(ROOMS), f"citeaudit/archive/ holds {folders}, not the three rooms"


def _room_of(path: Path) -> str | None:
    rel = path.relative_to(PROJECT).parts
    if rel[:2] == ("citeaudit", "archive") and len(rel) > 3:
        return rel[2]
    return None


def test_nothing_outside_a_room_imports_its_insides() -> None:
    exports = {room: _exports(room) for room in ROOMS}
    wrong = []
    for package in ROOM_CLIENTS:
        for path in sorted((PROJECT / package).rglob("*.py")):
            inside = _room_of(path)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                where = f"{path.relative_to(PROJECT)}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.Import):
                    modules = [(a.name, None) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    modules = [(node.module, [a.name for a in node.names])]
                else:
                    continue
                for module, names in modules:
                    parts = module.split(".")
                    if parts[:2] != ["citeaudit", "archive"]:
                        continue
                    if len(parts) == 2:
                        if names and set(names) - set(ROOMS):
                            wrong.append(f"{where}: from citeaudit.archive import {names}")
                        continue
                    room = parts[2]
                    if room == inside:
                        continue
                    if len(parts) > 3 or room not in ROOMS:
                        wrong.append(f"{where}: {module} (import from the room, not its modules)")
                    elif names is None or set(names) - exports[room]:
                        hidden = sorted(set(names or [module]) - exports[room])
                        wrong.append(f"{where}: {module} does not export {hidden}")
    assert not wrong, "\n".join(wrong)


def test_no_archive_module_imports_a_private_name() -> None:
    wrong = []
    for path in sorted(ARCHIVE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (
                    node.module or "").startswith("citeaudit")):
                private = [a.name for a in node.names if a.name.startswith("_")
                           and a.name != "__future__"]
                if private:
                    wrong.append(f"{path.relative_to(PROJECT)}:{node.lineno}: {private}")
    assert not wrong, "private names imported across modules:\n" + "\n".join(wrong)
