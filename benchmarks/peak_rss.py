"""Peak resident memory of one process, never inherited from the process that started it.

Why: on Linux ``getrusage``'s ``ru_maxrss`` (and ``os.wait4``'s) is kept per process across
``exec``: a child forked from a 400 MB benchmark parent starts with the parent's pages mapped,
and when it then execs a new program the kernel records that copy's size as the child's peak.
A child that does nothing reports ~410 MB that way. Two things here avoid it:

* :func:`own_peak_mb`: a process's own peak since its last ``exec`` (``VmHWM`` of
  ``/proc/self/status``, the high-water mark of its current address space), for children
  that report their own figure;
* :func:`run`: a command started from a fresh, small interpreter (``peak_rss_launcher.py``
  run as ``python -S -I``, itself exec'd, so it holds nothing of the caller): that launcher
  starts CMD, waits for it and writes CMD's wall seconds, CPU seconds and ``ru_maxrss``.
  CMD can inherit at most the launcher's own ~10 MB (the ``floor_mb`` of the result: a
  figure at or below it is the floor, not the command).

``python benchmarks/peak_rss.py --check`` shows the difference: a 400 MB parent starts a child
that does nothing, both ways.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

LAUNCHER = Path(__file__).resolve().with_name("peak_rss_launcher.py")


def own_peak_mb() -> float:
    """This process's peak RSS in MB since it was exec'd (``VmHWM``; on a system without
    ``/proc`` the ``getrusage`` figure, which may include an inherited peak)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass(frozen=True)
class Measured:
    """One finished command: exit code, wall and CPU seconds (its children's included), peak
    RSS in MB (the largest of the command and the children it waited for: ``wait4``), and the
    launcher's own peak, the most the command could have inherited."""

    returncode: int
    wall_s: float
    cpu_s: float
    peak_mb: float
    floor_mb: float


class Launched:
    """A command running under the fresh launcher: ``proc`` is the launcher (the command is
    its only child, for samplers of a process tree); :meth:`wait` gives the figures."""

    def __init__(self, cmd: list[str], **popen: object) -> None:
        with tempfile.NamedTemporaryFile(prefix="peak-rss-", suffix=".json",
                                         delete=False) as tmp:
            self.result = Path(tmp.name)
        self.cmd = [str(c) for c in cmd]
        self.proc = subprocess.Popen([sys.executable, "-S", "-I", str(LAUNCHER),
                                      str(self.result), "--", *self.cmd],
                                     **popen)  # type: ignore[call-overload]

    def wait(self) -> Measured:
        """Wait for the command; its figures (the launcher's failure raises)."""
        try:
            self.proc.wait()
            text = self.result.read_text() if self.result.exists() else ""
            if not text:
                raise RuntimeError(f"the launcher for {self.cmd[0]} failed "
                                   f"(exit {self.proc.returncode})")
            return Measured(**json.loads(text))
        finally:
            self.result.unlink(missing_ok=True)


def run(cmd: list[str], **popen: object) -> Measured:
    """Run ``cmd`` to its end through a fresh launcher interpreter (see the module's
    docstring); ``popen`` goes to :class:`subprocess.Popen` of the launcher (stdout, stderr,
    env, cwd: the command inherits them)."""
    return Launched(cmd, **popen).wait()


def _check() -> None:
    """A 400 MB parent starts a child that does nothing: inherited vs own figure."""
    ballast = bytearray(400 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    code = ("print(next(line.split()[1] for line in open('/proc/self/status') "
            "if line.startswith('VmHWM:')))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    own_kb = int(proc.stdout.read())  # type: ignore[union-attr]
    _, _, usage = os.wait4(proc.pid, 0)
    fresh = run([sys.executable, "-c", code], stdout=subprocess.DEVNULL)
    print(f"parent peak {own_peak_mb():.0f} MB; a child that does nothing but read its own "
          f"VmHWM ({own_kb / 1024:.1f} MB):\n"
          f"  forked from the parent, os.wait4 ru_maxrss: {usage.ru_maxrss / 1024:.1f} MB "
          f"(the parent's, inherited)\n"
          f"  through the fresh launcher (peak_rss.run): {fresh.peak_mb:.1f} MB "
          f"(launcher floor {fresh.floor_mb:.1f} MB)")
    del ballast


if __name__ == "__main__":
    if sys.argv[1:] != ["--check"]:
        sys.exit("usage: peak_rss.py --check")
    _check()
