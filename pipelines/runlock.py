"""One writer per derived folder: ``<derived>/.citeaudit.lock``.

For a derived root on object storage the lock lives in the local state folder of that root
(``storage.local_state_dir``: ``$CITEAUDIT_STATE_DIR/s3/<bucket>/<prefix>/.citeaudit.lock``), so
it keeps two writers on this machine apart; writers on other machines are serialized by the
run queue of their shared Dagster instance, not by this file.

The lock is an advisory ``flock`` on the file, so the kernel releases it when its holder dies,
however it dies; the file also records the holder (PID, start time, command) so a second writer
can say who holds it. A lock file whose recorded PID is gone is a stale lock: it is taken over
with a warning naming the dead holder.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from citeaudit import storage
from citeaudit.parquet_io import pid_alive

LOCK_FILE = ".citeaudit.lock"


class LockHeld(RuntimeError):
    """Another live process writes into this derived folder."""


def _holder(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}


def describe(holder: dict) -> str:
    """``PID 123, started 2026-11-02T10:00:00Z (citeaudit run ...)``."""
    command = f" ({holder['command']})" if holder.get("command") else ""
    return f"PID {holder.get('pid', '?')}, started {holder.get('started', '?')}{command}"



@contextmanager
def hold(derived: Path, command: str = "", warn=None) -> Iterator[Path]:
    """Hold the derived folder's lock for the duration of the block.

    Raises :class:`LockHeld` at once (no waiting) when a live process holds it. ``warn`` is
    called with a message when a stale lock of a dead process is taken over.
    """
    folder = storage.local_state_dir(derived)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(
                f"{storage.uri(derived)} is being written by another citeaudit process "
                f"({describe(_holder(path))}); wait for it to finish, or use another --derived"
            ) from None
        previous = _holder(path)
        if previous.get("pid") and previous.get("pid") != os.getpid() and warn is not None:
            state = "still running without the lock" if pid_alive(previous["pid"]) else "dead"
            warn(f"took over the stale lock {path} of {describe(previous)}: that process is "
                 f"{state}")
        record = {
            "pid": os.getpid(),
            "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": command or " ".join(["citeaudit", *sys.argv[1:]]),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)
