"""The launcher of ``peak_rss.run``: ``python -S -I peak_rss_launcher.py RESULT -- CMD ...``.

Exec'd as a fresh interpreter with only the standard modules it needs (about 10 MB resident),
it starts CMD, waits for it and writes CMD's exit code, wall and CPU seconds and peak RSS
(``os.wait4``) as JSON to RESULT. CMD can inherit no more than this launcher's own size
(``floor_mb``), whatever the size of the process that started the launcher.
"""

import json
import os
import sys
import time


def own_peak_mb() -> float:
    """This process's peak RSS in MB since it was exec'd (``VmHWM``)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(result: str, cmd: list[str]) -> int:
    """Start ``cmd``, wait, write the figures to ``result``; the command's exit code."""
    floor = own_peak_mb()
    start = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    with open(result, "w", encoding="utf-8") as fh:
        json.dump({"returncode": code, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                   "peak_mb": usage.ru_maxrss / 1024, "floor_mb": floor}, fh)
    return code


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: peak_rss_launcher.py RESULT_FILE -- COMMAND [ARG ...]")
    sys.exit(main(sys.argv[1], sys.argv[3:]))
