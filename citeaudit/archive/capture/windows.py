"""Two windows that must agree: the crawl's ``fetch.reference_window_hours`` and each codebook's
``alignment_window``.

Why two knobs: the crawl is a daily asset that must not vary by codebook version (citeaudit.yaml
holds how the pipeline runs, the codebook how it judges), so the crawl cannot read the
codebook's window. They still have to agree in one direction: the crawl plan counts a readable
capture within ``reference_window_hours`` of the reference time as "near it" and then fetches
nothing and asks no archive, and the archive lookups copy captures from that window. A capture
the crawl counts as near but the alignment window does not accept (the fetch window wider than
``alignment_window.before_days`` or ``after_days``) leaves the citation ``unresolved``
(``no_capture_in_window``) with nothing fetched to fix it: that is warned about, loudly, naming
both files and keys and the fix. A fetch window *narrower* than the alignment window is not
warned about: it only costs a fetch the alignment did not need, or leaves an archive capture
the alignment would have accepted uncopied (the citation then stays unresolved, fail closed).
"""

from __future__ import annotations

from pathlib import Path

from citeaudit import storage
from citeaudit.config import CONFIG_FILE, FetchSettings


def window_warnings(raw: Path, settings: FetchSettings) -> list[str]:
    """One line per codebook version of ``raw`` whose alignment window is narrower, on either
    side, than ``fetch.reference_window_hours`` (see the module docstring). Codebooks that do
    not load are left to ``citeaudit check``."""
    from citeaudit.codebook import CodebookError, load

    folder = storage.path(raw) / "codebooks"
    hours = settings.reference_window_hours
    out = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            win = load(path).alignment_window
        except (CodebookError, OSError, ValueError):
            continue
        narrow = [(f"alignment_window.{k} {days:g} ({days * 24:g} h)", days * 24)
                  for k, days in (("before_days", win.before_days),
                                  ("after_days", win.after_days)) if hours > days * 24]
        if not narrow:
            continue
        cap = min(h for _, h in narrow)
        out.append(
            f"warning: {storage.path(raw) / CONFIG_FILE}: fetch.reference_window_hours "
            f"{hours:g} is wider than {path}: " + " and ".join(k for k, _ in narrow)
            + ": a capture the crawl counts as near the reference time (and so fetches nothing "
            "and asks no archive) may lie outside the window the alignment accepts, leaving the "
            "citation unresolved (no_capture_in_window); fix: set fetch.reference_window_hours: "
            f"{cap:g} or less, or widen alignment_window in {path.name}")
    return out
