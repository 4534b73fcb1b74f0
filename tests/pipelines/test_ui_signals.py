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

import pytest
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


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_ui_stops_cleanly_on_signal(tmp_path, signum):
    raw = tmp_path / "raw"
    assert cli.main(["init", "--raw", str(raw)]) == 0
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home")}
    command = [str(Path(sys.executable).with_name("citeaudit")), "ui", "--raw", str(raw),
               "--derived", str(tmp_path / "derived"), "--port", str(port)]
    proc = subprocess.Popen(command, env=env, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert proc.poll() is None, f"ui exited early: {proc.stderr.read()[-2000:]}"
            try:
                if requests.get(f"http://127.0.0.1:{port}/server_info", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "the UI did not come up"
            time.sleep(1)
        proc.send_signal(signum)
        code = proc.wait(timeout=STOP_SECONDS)
        deadline = time.monotonic() + STOP_SECONDS
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _group_alive(proc.pid), "a process of the UI outlived it"
        assert code in (0, -signum, 128 + signum), code
        assert "Traceback" not in proc.stderr.read()
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
