"""Shared fixtures: the real third-party corpora beside the project, and one demo run.

``demo_run`` is a demo corpus generated once per test session and run once through the real
``citeaudit run`` (Dagster jobs in process, sqlite instance in its own DAGSTER_HOME). Every
end-to-end test that only reads outputs shares it; under pytest-xdist the workers share it too
(the first to arrive builds it under a file lock, the others wait and read). A test that must
change inputs or outputs takes ``demo_run.copy(tmp_path)`` instead. At the end of the session
the shared files are hashed again: a test that wrote into them fails the run.

``small_run`` is the same for a much smaller corpus (one date crawled that day only, both
codebooks, no live archive): the reference of the tests that run the whole pipeline again over
the same raw folder to compare bytes (on S3, after a SIGKILL, two runs at once) and check
nothing a planted case shows. A
pipeline run costs mostly Dagster's per-step bookkeeping, so a test that needs its own run should
use the smallest corpus that still plants what it checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from filelock import FileLock

PROJECT = Path(__file__).resolve().parents[1]
CORPORA = PROJECT.parent / "shared" / "corpora"
# The tests' Dagster instance config (no capture of step logs: tests/dagster.yaml says why).
# `citeaudit` copies it into each new DAGSTER_HOME, in this process and in the subprocesses the
# tests start; a fixture that prepares a DAGSTER_HOME itself copies DAGSTER_YAML.
DAGSTER_YAML = Path(__file__).resolve().parent / "dagster.yaml"
os.environ.setdefault("CITEAUDIT_DAGSTER_YAML", str(DAGSTER_YAML))

# The shared demo: big enough that every planted case of every stage appears (twelve source-risk
# defect types, every support rejection reason, every L3 verdict), small enough to run in ~20 s.
DEMO_SEED, DEMO_ANSWERS, DEMO_DAYS = 7, 150, 2
# The small shared run: one answer date, crawled that day only (``answer_day_crawls_only``),
# both codebooks.
SMALL_SEED, SMALL_ANSWERS, SMALL_DAYS = 5, 10, 1
# What a developer's shell may set that the shared runs must not follow: the live registries,
# another executor, a judge endpoint (the runs' pairs would go to it).
UNSET_IN_RUNS = ("CITEAUDIT_CROSSREF_URL", "CITEAUDIT_OPENALEX_URL", "CITEAUDIT_EXECUTOR",
                 "CITEAUDIT_JUDGE_BASE_URL")


# The test modules that run whole pipelines, costliest first (durations of a full run of the
# suite): `make test` hands modules to its two xdist workers in collection order
# (--dist loadscope --no-loadscope-reorder), so the long ones start first and the many short
# modules fill the gaps at the end instead of one long module running alone on one core.
SLOW_MODULES_FIRST = (
    "tests/pipelines/test_run_assets.py",  # builds the shared demo run (and its rerun) first
    "tests/distributed/test_celery_runs.py",  # builds the small shared run first
    "tests/pipelines/test_ops_backfill.py",
    "tests/test_wheel.py",
    "tests/storage/test_s3_run.py",
    "tests/pipelines/test_loud_inputs.py",
    "tests/pipelines/test_end_to_end.py",
    "tests/scholarly/test_scholarly_demo.py",
    "tests/pipelines/test_ops_crash.py",
    "tests/imports/test_engines.py",
    "tests/imports/test_imports.py",
    "tests/metrics/test_paper_definitions.py",
    "tests/archive/test_archive_import_e2e.py",
    "tests/source_risk/test_source_risk_batches.py",
    "tests/alignment/test_alignment.py",
    "tests/pipelines/test_ui_signals.py",
    "tests/archive/test_fetch_pipeline.py",
    "tests/support/test_support.py",
    "tests/source_risk/test_source_risk_conformance.py",
    "tests/stats/test_stats_coverage.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules of SLOW_MODULES_FIRST first, in that order; every other test after them in
    collection order (a stable sort: the tests of a module keep their order)."""
    rank = {name: i for i, name in enumerate(SLOW_MODULES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


@pytest.fixture(scope="session")
def corpora() -> Path:
    """../shared/corpora, or a skip that says why the test could not run."""
    if not CORPORA.is_dir():
        pytest.skip(
            f"real corpora not found at {CORPORA} (they live beside the project in ../shared)"
        )
    return CORPORA


@dataclass(frozen=True)
class DemoRun:
    """A generated demo corpus (``raw``), the outputs of one ``citeaudit run`` over it
    (``derived``), the Dagster instance that ran it (``home``) and its ``ground_truth.json``."""

    raw: Path
    derived: Path
    home: Path
    truth: dict = field(repr=False)

    def copy(self, into: Path) -> DemoRun:
        """A private copy (raw, derived, instance) for a test that changes files."""
        into.mkdir(parents=True, exist_ok=True)
        parts = {name: into / name for name in ("raw", "derived", "home")}
        for name, target in parts.items():
            shutil.copytree(getattr(self, name), target, symlinks=True)
        return DemoRun(parts["raw"], parts["derived"], parts["home"], self.truth)


def tree_digests(*folders: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folders`` (catalog and sqlite journals included)."""
    out = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _build_run(root: Path, seed: int, answers: int, days: int, live: bool,
               trim: bool = False) -> None:
    from citeaudit import cli, demo_corpus

    raw, derived, home = root / "raw", root / "derived", root / "home"
    demo_corpus.generate(raw, seed=seed, answers=answers, days=days)
    if trim:
        from ops_support import answer_day_crawls_only

        answer_day_crawls_only(raw)
    if live:
        demo_corpus.site.archive_live(raw)  # as `make demo`: the last date archived live too
    home.mkdir()
    shutil.copyfile(DAGSTER_YAML, home / "dagster.yaml")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(home))
        for var in UNSET_IN_RUNS:
            mp.delenv(var, raising=False)
        code = cli.main(["run", "--raw", str(raw), "--derived", str(derived), "--quiet"])
    if code != 0:
        raise RuntimeError(f"citeaudit run over the shared corpus {root.name} exited {code}")
    (root / "digests.json").write_text(json.dumps(tree_digests(raw, derived)))


def _shared_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str, name: str,
                build: Callable[[Path], None]) -> Iterator[DemoRun]:
    """One run per session under ``<basetemp>/<name>``, built by the first xdist worker to ask
    (the others wait on the lock, then read); at the session's end its files must be unchanged."""
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # one folder for all xdist workers
    root = shared / name
    with FileLock(str(shared / f"{name}.lock")):
        if not (root / "digests.json").is_file():
            if root.exists():
                shutil.rmtree(root)  # a build that failed earlier in this session
            root.mkdir()
            build(root)
    truth_file = root / "raw" / "ground_truth.json"
    truth = json.loads(truth_file.read_text(encoding="utf-8")) if truth_file.is_file() else {}
    run = DemoRun(root / "raw", root / "derived", root / "home", truth)
    yield run
    before = json.loads((root / "digests.json").read_text())
    after = tree_digests(run.raw, run.derived)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"a test wrote into the shared run {name}: {changed[:10]}"


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[DemoRun]:
    """The session's shared demo run (read only: take ``.copy(tmp_path)`` to change anything)."""
    yield from _shared_run(
        tmp_path_factory, worker_id, "shared_demo_run",
        lambda root: _build_run(root, DEMO_SEED, DEMO_ANSWERS, DEMO_DAYS, live=True))


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[DemoRun]:
    """The session's shared small run (read only, as ``demo_run``): for tests that rerun the
    whole pipeline over the same corpus and compare with a clean run's bytes."""
    yield from _shared_run(
        tmp_path_factory, worker_id, "shared_small_run",
        lambda root: _build_run(root, SMALL_SEED, SMALL_ANSWERS, SMALL_DAYS, live=False,
                                trim=True))


LIU_FILE = CORPORA / "annotations" / "liu-verifiability" / "intrinsic_halls.json"
EXPERTQA_FILE = CORPORA / "annotations" / "expertqa" / "domain_val.jsonl"


def _build_imported(root: Path) -> None:
    """Liu et al.'s and ExpertQA's labelled answers imported into one raw folder (each on its
    own dates) and run by `citeaudit run` offline (the registries answer from the empty cache
    only: a test never leaves the machine)."""
    from citeaudit import cli

    raw, derived, home = root / "raw", root / "derived", root / "home"
    for dataset, path in (("liu", LIU_FILE), ("expertqa", EXPERTQA_FILE)):
        if cli.main(["import", dataset, str(path), "--out", str(raw)]) != 0:
            raise RuntimeError(f"citeaudit import {dataset} {path} failed")
    home.mkdir()
    shutil.copyfile(DAGSTER_YAML, home / "dagster.yaml")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(home))
        mp.setenv("CITEAUDIT_CROSSREF_URL", "offline")
        mp.setenv("CITEAUDIT_OPENALEX_URL", "offline")
        for var in ("CITEAUDIT_EXECUTOR", "CITEAUDIT_JUDGE_BASE_URL"):
            mp.delenv(var, raising=False)
        code = cli.main(["run", "--raw", str(raw), "--derived", str(derived), "--quiet"])
    if code != 0:
        raise RuntimeError(f"citeaudit run over the imported corpora exited {code}")
    (root / "digests.json").write_text(json.dumps(tree_digests(raw, derived)))


@pytest.fixture(scope="session")
def imported_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[DemoRun]:
    """Liu et al. and ExpertQA imported and run once per session (read only, as ``demo_run``;
    ``truth`` is empty): the tests of the importers and of the papers' metric definitions."""
    for path in (LIU_FILE, EXPERTQA_FILE):
        if not path.is_file():
            pytest.skip(f"{path} is absent (the real corpora live beside the project in "
                        "../shared)")
    yield from _shared_run(tmp_path_factory, worker_id, "shared_imported_run", _build_imported)


def _build_rerun(root: Path, first: DemoRun) -> None:
    """A private copy of ``first`` (outputs, registry cache, run history) run again by
    `citeaudit run` over the same raw folder; its printed summary kept in ``summary.txt``."""
    from citeaudit import cli

    again = first.copy(root)
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(again.home))
        for var in UNSET_IN_RUNS:
            mp.delenv(var, raising=False)
        with contextlib.redirect_stdout(out):
            code = cli.main(["run", "--raw", str(first.raw), "--derived", str(again.derived)])
    if code != 0:
        raise RuntimeError(f"the second citeaudit run over the shared demo exited {code}")
    (root / "summary.txt").write_text(out.getvalue(), encoding="utf-8")
    (root / "digests.json").write_text(json.dumps(tree_digests(again.raw, again.derived)))


@pytest.fixture(scope="session")
def demo_rerun(tmp_path_factory: pytest.TempPathFactory, worker_id: str,
               demo_run: DemoRun) -> Iterator[DemoRun]:
    """The shared demo run run again (read only, as ``demo_run``): a copy of its outputs and
    run history, then `citeaudit run` over the same raw folder once per session, for the tests
    of a second run (same bytes, no new registry request); ``root/summary.txt`` holds what the
    second run printed (``demo_rerun.home.parent / "summary.txt"``)."""
    yield from _shared_run(tmp_path_factory, worker_id, "shared_demo_rerun",
                           lambda root: _build_rerun(root, demo_run))


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch):
    """Fail any test that opens a socket to, or resolves, anything but loopback (tests never
    leave the machine). The refused call raises OSError as a dead network would, and the test
    fails at teardown naming the address, so code that swallows errors cannot hide it."""
    import ipaddress
    import socket

    attempts: list[str] = []
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def loopback(host: object) -> bool:
        if host in (None, "localhost", b"localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host.decode() if isinstance(host, bytes) else host
                                        ).is_loopback
        except (ValueError, AttributeError):
            return False

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not loopback(address[0]):
            attempts.append(f"connect {address}")
            raise OSError(f"test guard: no network beyond loopback ({address})")
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not loopback(host):
            attempts.append(f"getaddrinfo {host!r}")
            raise socket.gaierror(f"test guard: no network beyond loopback ({host!r})")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
    assert not attempts, f"the test tried to leave the machine: {attempts[:5]}"


@pytest.fixture(autouse=True)
def _sigterm_as_found() -> Iterator[None]:
    """SIGTERM as each test found it. Dagster's in-process execution (a test's ``materialize``
    or ``execute_in_process``) points SIGTERM at SIGINT's handler, which a pytest-xdist worker
    ignores: every server a later test started would inherit "ignore SIGTERM" and outlive its
    stop (pywb's took the 10 s grace, then SIGKILL). ``citeaudit run`` restores it itself."""
    import signal

    before = signal.getsignal(signal.SIGTERM)
    yield
    if before is not None:
        signal.signal(signal.SIGTERM, before)
