"""`citeaudit ui` is the real `dagster dev` (webserver, daemon, code server) on loopback: it must
stop cleanly, every process of it, on SIGTERM (a service manager) and on SIGINT (Ctrl-C); and
it shows the partitions `citeaudit status` lists (the data's dates), on the shared demo run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

from citeaudit import cli, layout

START_SECONDS, STOP_SECONDS = 240, 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


PARTITIONS_QUERY = ("{ assetNodes { assetKey { path } "
                    "partitionStats { numMaterialized numPartitions } } }")


def _ui_partitions(port: int) -> dict[str, tuple[int, int]]:
    """(partitions, materialized) of every partitioned asset, as the UI's GraphQL API says."""
    reply = requests.post(f"http://127.0.0.1:{port}/graphql", json={"query": PARTITIONS_QUERY},
                          timeout=60).json()
    return {"/".join(node["assetKey"]["path"]): (node["partitionStats"]["numPartitions"],
                                                 node["partitionStats"]["numMaterialized"])
            for node in reply["data"]["assetNodes"] if node["partitionStats"]}


def _status_partitions(raw: Path, derived: Path, home: Path, monkeypatch, capsys
                       ) -> dict[str, tuple[int, int]]:
    """(partitions, materialized or stale) of every partitioned asset, as `status` lists them."""
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    capsys.readouterr()
    cli.main(["status", "--raw", str(raw), "--derived", str(derived), "--json"])
    rows = [r for r in json.loads(capsys.readouterr().out)["partitions"] if r["partition"]]
    return {asset: (sum(r["asset"] == asset for r in rows),
                    sum(r["asset"] == asset and r["state"] in ("materialized", "stale")
                        for r in rows))
            for asset in {r["asset"] for r in rows}}


def _start_ui(demo_run, root: Path) -> tuple[subprocess.Popen, int, Path]:
    """`citeaudit ui` over the shared demo with a copy of its instance (the UI's daemon writes
    to its instance, never to the demo's files)."""
    home = root / "home"
    shutil.copytree(demo_run.home, home)
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    for var in ("CITEAUDIT_AUTOMATION", "CITEAUDIT_RAW", "CITEAUDIT_DERIVED"):
        env.pop(var, None)
    command = [str(Path(sys.executable).with_name("citeaudit")), "ui", "--raw",
               str(demo_run.raw), "--derived", str(demo_run.derived), "--port", str(port)]
    proc = subprocess.Popen(command, env=env, cwd=root, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, port, home


def test_ui_lists_statuss_partitions_and_stops_cleanly_on_sigterm_and_sigint(
        tmp_path, demo_run, monkeypatch, capsys):
    """Two UIs over the shared demo, started side by side (each takes seconds to come up:
    together, not in turn). The first lists, per asset, exactly the partitions `citeaudit
    status` lists, all materialized (no calendar of empty days), then gets SIGTERM; the other
    gets SIGINT. Every process of each must be gone."""
    raw, derived = demo_run.raw, demo_run.derived
    signals = (signal.SIGTERM, signal.SIGINT)
    uis = {}
    try:
        for signum in signals:
            root = tmp_path / signum.name
            root.mkdir()
            uis[signum] = _start_ui(demo_run, root)
        deadline = time.monotonic() + START_SECONDS
        waiting = set(signals)
        while waiting:
            for signum in sorted(waiting):
                proc, port, _home = uis[signum]
                assert proc.poll() is None, \
                    f"ui exited early: {proc.stderr.read()[-2000:]}"
                try:
                    if requests.get(f"http://127.0.0.1:{port}/server_info", timeout=2).ok:
                        waiting.discard(signum)
                except requests.RequestException:
                    pass
            assert time.monotonic() < deadline, "the UI did not come up"
            if waiting:
                time.sleep(0.5)

        _proc, port, home = uis[signal.SIGTERM]
        ui = _ui_partitions(port)
        listed = _status_partitions(raw, derived, home, monkeypatch, capsys)
        assert ui == listed
        assert all(done == count for count, done in ui.values()), ui
        # the data's dates only: every answers/ or warc/ date for a daily asset, the answer
        # dates × codebooks for a judged one (before: every day up to today)
        dates, answer_dates = layout.discover_dates(raw)[0], layout.answer_dates(raw)
        assert len(dates) > len(answer_dates) > 1
        assert ui["answers"] == (len(dates), len(dates))
        judged = len(answer_dates) * len(layout.codebook_versions(raw))
        assert ui["metrics"] == (judged, judged)

        for signum, (proc, _port, _home) in uis.items():
            proc.send_signal(signum)
        for signum, (proc, _port, _home) in uis.items():
            code = proc.wait(timeout=STOP_SECONDS)
            deadline = time.monotonic() + STOP_SECONDS
            while _group_alive(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert not _group_alive(proc.pid), f"a process of the UI outlived {signum.name}"
            assert code in (0, -signum, 128 + signum), (signum.name, code)
            assert "Traceback" not in proc.stderr.read(), signum.name
    finally:
        for proc, _port, _home in uis.values():
            if _group_alive(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
