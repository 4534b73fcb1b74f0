"""The house rules of the code layout, read from the source itself (no imports executed):

- one ``citeaudit/<stage>/`` package per stage, named as its ``assets/<stage>.py`` module and, when
  it has SQL, its ``sql/<stage>/`` folder;
- no import circle between modules, counting imports inside functions too;
- a stage imports foundations and earlier stages only, and a foundation imports no stage.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
PACKAGES = ("citeaudit", "assets", "pipelines")
# Stages in pipeline order: a stage may import only the stages before it.
STAGES = ("ingest", "archive", "citations", "alignment", "support", "scholarly", "source_risk",
          "metrics", "report")
# Foundations that stages build on: they may not import any stage.
CORE = ("codebook", "config", "duck", "parquet_io", "layout", "catalog", "stats", "storage")
# The outer shell (command line, adapters of external data, the demo generator): may import
# stages, but no stage may import it.
SHELL = ("cli", "ops_cli", "imports", "demo_corpus")


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
