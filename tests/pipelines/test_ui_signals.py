"""`citeaudit ui` is the real `dagster dev` (webserver, daemon, code server) on loopback: it must
stop cleanly, every process of it, on SIGTERM (a service manager) and on SIGINT (Ctrl-C)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

from citeaudit import cli

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


def _start_ui(root: Path) -> tuple[subprocess.Popen, int]:
    raw = root / "raw"
    assert cli.main(["init", "--raw", str(raw)]) == 0
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(root / "home")}
    command = [str(Path(sys.executable).with_name("citeaudit")), "ui", "--raw", str(raw),
               "--derived", str(root / "derived"), "--port", str(port)]
    proc = subprocess.Popen(command, env=env, cwd=root, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, port


def test_ui_stops_cleanly_on_sigterm_and_on_sigint(tmp_path):
    """Two UIs started side by side (each takes seconds to come up: together, not in turn);
    one gets SIGTERM, the other SIGINT."""
    signals = (signal.SIGTERM, signal.SIGINT)
    uis = {}
    try:
        for signum in signals:
            root = tmp_path / signum.name
            root.mkdir()
            uis[signum] = _start_ui(root)
        deadline = time.monotonic() + START_SECONDS
        waiting = set(signals)
        while waiting:
            for signum in sorted(waiting):
                proc, port = uis[signum]
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
        for signum, (proc, _port) in uis.items():
            proc.send_signal(signum)
        for signum, (proc, _port) in uis.items():
            code = proc.wait(timeout=STOP_SECONDS)
            deadline = time.monotonic() + STOP_SECONDS
            while _group_alive(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert not _group_alive(proc.pid), f"a process of the UI outlived {signum.name}"
            assert code in (0, -signum, 128 + signum), (signum.name, code)
            assert "Traceback" not in proc.stderr.read(), signum.name
    finally:
        for proc, _port in uis.values():
            if _group_alive(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
