"""A local pywb: a collection of WARCs built with ``wb-manager`` and served by ``wayback``.

Why subprocesses: pywb pins libraries citeaudit cannot share (an old redis, brotlipy), so it
lives in its own virtualenv (``make pywb`` builds ``.venv-pywb``) and is run as programs, never
imported. :func:`find_pywb` locates the programs: ``$CITEAUDIT_PYWB`` (a ``bin`` folder), then
``.venv-pywb/bin`` beside the project, then ``PATH``. The server only ever binds 127.0.0.1 (or
the address the caller gives) on a free port and is stopped by its PID.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

PYWB_VENV = ".venv-pywb"


class PywbMissing(RuntimeError):
    """pywb's programs are not installed (``make pywb`` builds them)."""


def find_pywb() -> Path:
    """The folder holding ``wb-manager`` and ``wayback``; :class:`PywbMissing` if none."""
    candidates = []
    if os.environ.get("CITEAUDIT_PYWB"):
        candidates.append(Path(os.environ["CITEAUDIT_PYWB"]))
    candidates.append(Path(__file__).resolve().parents[3] / PYWB_VENV / "bin")
    found = shutil.which("wayback")
    if found:
        candidates.append(Path(found).parent)
    for c in candidates:
        if (c / "wb-manager").is_file() and (c / "wayback").is_file():
            return c
    raise PywbMissing("pywb is not installed: run `make pywb` (a virtualenv .venv-pywb of its "
                      "own) or set CITEAUDIT_PYWB to a folder holding wb-manager and wayback")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def run_tool(bin_dir: Path, root: Path, *args: str) -> None:
    proc = subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=root, capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): "
                           f"{(proc.stderr or proc.stdout).strip()[-800:]}")


def build_collection(root: Path, collection: str, warcs: list[Path]) -> Path:
    """A pywb collection ``root/collections/<collection>`` holding copies of ``warcs``
    (``wb-manager init`` when new, then ``wb-manager add``, which indexes them)."""
    bin_dir = find_pywb()
    root.mkdir(parents=True, exist_ok=True)
    coll = root / "collections" / collection
    if not coll.is_dir():
        run_tool(bin_dir, root, "wb-manager", "init", collection)
    have = {p.name for p in (coll / "archive").iterdir()} if (coll / "archive").is_dir() else set()
    todo = [str(w) for w in warcs if Path(w).name not in have]
    for i in range(0, len(todo), 200):
        run_tool(bin_dir, root, "wb-manager", "add", collection, *todo[i:i + 200])
    return coll


class PywbServer:
    """``wayback`` serving ``root``'s collections on ``host``:``port``; stop by PID.

    ``with PywbServer(root) as server: server.base_url`` (``http://127.0.0.1:<port>``)."""

    def __init__(self, root: Path, host: str = "127.0.0.1", port: int | None = None,
                 log: Path | None = None) -> None:
        self.root = Path(root)
        self.host = host
        self.port = port or free_port(host)
        self.log = log or self.root / "wayback.log"
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 60.0) -> PywbServer:
        """Start the server and wait until it answers."""
        bin_dir = find_pywb()
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [str(bin_dir / "wayback"), "-b", self.host, "-p", str(self.port)],
                cwd=self.root, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"wayback exited ({self.proc.returncode}); see {self.log}")
            try:
                with urllib.request.urlopen(self.base_url + "/", timeout=2):
                    return self
            except urllib.error.HTTPError:
                return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"wayback did not answer on {self.base_url} in {timeout:g} s")

    def stop(self) -> None:
        """Stop the server (its PID), waiting for it to exit."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def __enter__(self) -> PywbServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
