"""The report's "What changed" section in a real headless Chromium (Debian's ``chromium``,
driven by Playwright, offline), on the shared demo run's comparisons: the section opens the
page, its difference plots have visible marks, every comparison is in its table, and the page
raises no error. Skips, saying how to install, without Chromium or Playwright."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from citeaudit import parquet_io
from citeaudit.report import render


def _chromium() -> str:
    for candidate in (os.environ.get("CITEAUDIT_CHROMIUM"), "chromium", "chromium-browser"):
        found = candidate and shutil.which(candidate)
        if found:
            return found
    pytest.skip("headless Chromium not found: `apt-get install -y chromium`, or point "
                "CITEAUDIT_CHROMIUM at a Chromium binary")


def test_what_changed_opens_the_report(demo_run, tmp_path: Path) -> None:
    executable = _chromium()
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    date, version = demo_run.truth["dates"][-1], "v2"
    part = {"observation_date": date, "codebook": version}
    derived = tmp_path / "derived"
    for table in ("metrics", "comparisons", "alerts"):
        source = parquet_io.partition_dir(demo_run.derived, table, part) / parquet_io.DATA_FILE
        target = parquet_io.partition_dir(derived, table, part)
        target.mkdir(parents=True)
        shutil.copyfile(source, target / parquet_io.DATA_FILE)
    n_rows = parquet_io.read_partition(derived, "comparisons", part).num_rows
    path = render.build(derived, date, version).path
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True,
                                     args=["--no-sandbox", "--disable-gpu",
                                           "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri(), wait_until="load")
            state = page.evaluate("""() => {
                const first = document.querySelector('section');
                const sec = document.querySelector('#changes');
                const marks = [...sec.querySelectorAll('svg.plot .mark')].filter(m => {
                    const r = m.getBoundingClientRect(); return r.width > 0 || r.height > 0; });
                return {first: first && first.id, heading: sec.querySelector('h2').innerText,
                        plots: sec.querySelectorAll('svg.plot').length, marks: marks.length,
                        significant: sec.querySelectorAll('table.changes')[0]
                            ? sec.querySelectorAll('table.changes')[0].rows.length - 1 : 0,
                        rows: sec.querySelector('details table').rows.length - 1,
                        alerts: sec.querySelector('#alerts').innerText};
            }""")
        finally:
            browser.close()
    assert not errors, errors
    assert state["first"] == "changes" and state["heading"] == "What changed"
    assert state["rows"] == n_rows
    assert state["marks"] == 2 * state["plots"]
    assert state["alerts"]
