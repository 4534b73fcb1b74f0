"""The package installs: a wheel built from this checkout runs the demo from anywhere.

A Celery worker or a user who ran ``pip install .`` has no checkout: the SQL files (``sql/``),
the report templates, the data dictionary (``docs/tables.md``) and the Dagster instance file
(``dagster.yaml``) must travel inside the wheel, with the ``assets`` and ``pipelines`` packages.
This test builds the wheel (no build isolation: the running environment's setuptools, nothing
downloaded), installs it into a fresh virtualenv whose only other packages are the running
environment's dependencies (a ``.pth`` file puts that site-packages *after* the venv's own, so
the installed copy wins over any editable install), then from a folder outside the checkout
runs ``citeaudit demo-corpus`` and ``citeaudit run`` with the venv's own console script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib.metadata import version
from pathlib import Path

import duckdb
import pytest
from ops_support import answer_day_crawls_only

PROJECT = Path(__file__).resolve().parents[1]
# What the build reads: the build files, the packages and the folders mapped into them.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "dagster.yaml",
           "citeaudit", "assets", "pipelines", "sql", "docs")
# Tables every demo run writes (the catalog has one view per asset on disk; these must be there).
MAIN_ASSETS = ("answers", "claims", "citations", "captures", "answer_checks", "claim_checks",
               "citation_existence", "passage_checks", "support_labels", "metadata_checks",
               "source_risk_records", "metrics")
TIMEOUT = 600


def _run(args: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} exited {proc.returncode}:\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def _expected_members() -> set[str]:
    """Wheel paths the checkout's files must appear at (the build maps sql/ and docs/)."""
    want = {f"{p.relative_to(PROJECT).as_posix()}"
            for package in ("citeaudit", "assets", "pipelines")
            for p in (PROJECT / package).rglob("*.py") if "__pycache__" not in p.parts}
    want |= {f"citeaudit/report/templates/{p.name}"
             for p in (PROJECT / "citeaudit" / "report" / "templates").glob("*.j2")}
    want |= {f"citeaudit/sql/{p.relative_to(PROJECT / 'sql').as_posix()}"
             for p in (PROJECT / "sql").rglob("*.sql")}
    return want | {"citeaudit/docs/tables.md", "pipelines/dagster.yaml"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the checkout (a stale ``build/`` folder of the checkout
    could otherwise slip files into it, and the build writes nothing into the checkout)."""
    if tuple(int(x) for x in version("setuptools").split(".")[:2]) < (70, 1):
        pytest.fail(f"building the wheel needs setuptools>=70.1 in this environment (it has "
                    f"{version('setuptools')}): `make venv` installs the test extra")
    root = tmp_path_factory.mktemp("wheel")
    src, dist = root / "src", root / "dist"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        if (PROJECT / name).is_dir():
            shutil.copytree(PROJECT / name, src / name, ignore=ignore)
        else:
            src.mkdir(exist_ok=True)
            shutil.copyfile(PROJECT / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--no-index", "--quiet", "--wheel-dir", dist, src], cwd=root, env=dict(os.environ))
    (found,) = dist.glob("citeaudit-*.whl")
    return found


def test_the_wheel_carries_every_module_sql_file_template_and_the_data_dictionary(
        wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    missing = sorted(_expected_members() - names)
    assert not missing, f"{len(missing)} files of the checkout are not in the wheel: {missing[:10]}"
    assert not [n for n in names if n.startswith(("sql/", "docs/", "tests/"))], \
        "the repository folders ship inside the packages, never at the top of site-packages"


def test_an_installed_wheel_runs_the_demo_outside_the_checkout(
        wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path,
         env=dict(os.environ))
    python = venv / "bin" / "python"
    own = Path(subprocess.check_output(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        text=True).strip())
    # The running environment's dependencies (dagster, duckdb, ...), after the venv's own
    # packages; a .pth line is a plain path, so the editable install's finder is not loaded.
    deps = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (own / "zz_running_environment.pth").write_text("\n".join(deps) + "\n")
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith("CITEAUDIT_")}
    env["DAGSTER_HOME"] = str(tmp_path / "home")
    work = tmp_path / "work"  # the working directory: outside the checkout
    work.mkdir()
    # pip runs from the venv (pip itself comes from the running environment via the .pth) so
    # the console script points at the venv's python.
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
          "--quiet", wheel], cwd=work, env=env)

    where = json.loads(_run([python, "-c", (
        "import json, citeaudit, assets, pipelines; from citeaudit import project_file as f; "
        "print(json.dumps([citeaudit.__file__, assets.__file__, pipelines.__file__, "
        "str(f('citeaudit.sql', 'sql', 'x.sql')), str(f('citeaudit.docs', 'docs', 'tables.md')), "
        "str(f('pipelines', '', 'dagster.yaml'))]))")], cwd=work, env=env).stdout)
    for path in where:
        assert Path(path).resolve().is_relative_to(own.resolve()), \
            f"{path} is not the installed copy (under {own})"

    citeaudit = venv / "bin" / "citeaudit"
    _run([citeaudit, "demo-corpus", "--out", "raw", "--answers", "16", "--days", "1",
          "--no-progress"], cwd=work, env=env)
    # The answer date's crawl only, one codebook of the demo's two: every asset still runs,
    # with three daily runs and one judged run fewer.
    answer_day_crawls_only(work / "raw")
    _run([citeaudit, "run", "--raw", "raw", "--derived", "derived", "--codebook", "v1",
          "--quiet"], cwd=work, env=env)

    derived = work / "derived"
    assert (tmp_path / "home" / "dagster.yaml").read_bytes() == \
        (PROJECT / "dagster.yaml").read_bytes(), "the instance file came from the wheel"
    con = duckdb.connect(str(derived / "catalog.duckdb"), read_only=True)
    views = dict(con.execute(
        "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
    assert set(MAIN_ASSETS) <= set(views), f"missing views: {set(MAIN_ASSETS) - set(views)}"
    for view, comment in views.items():
        assert comment, f"view {view} has no description: the data dictionary did not ship"
        assert any((derived / view).rglob("*.parquet")), f"no parquet file for {view}"
        con.execute(f'SELECT count(*) FROM "{view}"').fetchone()
    commented = con.execute("SELECT count(*) FROM duckdb_columns() WHERE NOT internal "
                            "AND comment IS NOT NULL").fetchone()[0]
    assert commented > 100, "columns carry their descriptions from the data dictionary"
    con.close()
    reports = sorted((derived / "report").rglob("index.html"))
    assert reports, "no report HTML"
    assert all("<html" in p.read_text(encoding="utf-8").lower() for p in reports)
