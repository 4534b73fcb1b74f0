"""The report in a real headless Chromium (Debian's ``chromium`` package, driven by Playwright).

Opens the page built from contract-shaped tables with XSS payloads planted in a cited page's
title, an omission source URL and the codebook description, and checks: no console error or
page error, no dialog, the payloads ran nothing and show as text, every plot has marks with a
size, rows without an interval are drawn as visible hollow markers labelled "no interval (1
cluster)", an engine without units shows a "no units" row, and a full-page screenshot (kept
in the test's tmp dir) is not blank.

Playwright's own browser downloads are never used (offline): ``executable_path`` points at
the system Chromium, or at $CITEAUDIT_CHROMIUM.
"""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path

import pytest
from test_report import build_reports, report_path

INSTALL_HINT = (
    "headless Chromium not found: install Debian's package with "
    "`apt-get update && apt-get install -y chromium` (.ci/run does this when it runs as root), "
    "or point CITEAUDIT_CHROMIUM at a Chromium binary"
)


def chromium_path() -> str:
    """The system Chromium, or a skip that says how to install it."""
    for candidate in (os.environ.get("CITEAUDIT_CHROMIUM"), "chromium", "chromium-browser"):
        found = candidate and shutil.which(candidate)
        if found:
            return found
    pytest.skip(INSTALL_HINT)


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    executable = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    derived, _ = build_reports(tmp_path)
    url = report_path(derived).as_uri()
    shot = tmp_path / "report.png"
    errors: list[str] = []
    dialogs: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=executable, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(url, wait_until="load")
            page.wait_for_timeout(200)

            state = page.evaluate(
                """() => ({
                    pwned: typeof window.__pwned === 'undefined' ? null : window.__pwned,
                    scripts: document.scripts.length,
                    images: document.images.length,
                    handlers: document.querySelectorAll('[onerror], [onload]').length,
                    text: document.body.innerText.length,
                    title: document.title,
                })"""
            )
            assert state["pwned"] is None, f"a planted payload ran: {state['pwned']}"
            assert (state["scripts"], state["images"], state["handlers"]) == (0, 0, 0), state
            assert state["text"] > 2000, f"the page is (nearly) blank: {state}"
            assert "codebook v1" in state["title"]
            # the payloads are on the page as visible text
            titles = page.locator("td.page .title").all_inner_texts()
            assert any('<script>window.__pwned = "script"</script>' in t for t in titles), titles
            assert "<img src=x onerror=" in page.locator("header").inner_text()

            plots = page.evaluate(
                """() => [...document.querySelectorAll('svg.plot')].map(svg => {
                    const box = svg.getBoundingClientRect();
                    const marks = [...svg.querySelectorAll('.mark')].filter(m => {
                        const r = m.getBoundingClientRect();
                        return r.width > 0 || r.height > 0;
                    });
                    const dots = [...svg.querySelectorAll('circle.mark, rect.mark')].filter(m => {
                        const r = m.getBoundingClientRect();
                        return r.width > 0 && r.height > 0;
                    });
                    return {label: svg.getAttribute('aria-label'), w: box.width, h: box.height,
                            marks: marks.length, solid: dots.length};
                })"""
            )
            assert len(plots) >= 10, plots
            empty = [p for p in plots if p["w"] <= 0 or p["h"] <= 0 or p["solid"] == 0]
            assert not empty, f"plots without visible marks: {empty}"
            assert sum(p["marks"] for p in plots) > 100

            # a row without an interval is a visible hollow marker with its label beside it;
            # an engine without units is a visible "no units" row, not a missing one
            hidden = page.evaluate(
                """() => {
                    const size = el => { const r = el.getBoundingClientRect();
                                         return r.width > 0 && r.height > 0; };
                    const hollow = [...document.querySelectorAll('circle.hollow')];
                    const labels = [...document.querySelectorAll('text.no-interval')];
                    const noUnits = [...document.querySelectorAll('text.no-estimate')]
                        .filter(t => t.textContent === 'no units');
                    return {
                        hollow: hollow.filter(size).length,
                        filled: hollow.filter(c => getComputedStyle(c).fill !==
                                                  'rgb(255, 255, 255)').length,
                        labels: labels.filter(size)
                            .filter(t => t.textContent === 'no interval (1 cluster)').length,
                        noUnits: noUnits.filter(size).length,
                        gammaRows: noUnits.filter(t => [...t.parentNode.querySelectorAll(
                            'text')].some(l => l.textContent === 'gamma' &&
                            l.getAttribute('y') === t.getAttribute('y'))).length,
                    };
                }"""
            )
            assert hidden["hollow"] >= 5 and hidden["filled"] == 0, hidden
            assert hidden["labels"] == hidden["hollow"], hidden
            assert hidden["noUnits"] >= 1 and hidden["gammaRows"] >= 1, hidden

            page.screenshot(path=str(shot), full_page=True)
            # decode the screenshot in the browser: a blank page has (almost) one colour
            check = browser.new_page()
            data = base64.b64encode(shot.read_bytes()).decode("ascii")
            colours = check.evaluate(
                """async (data) => {
                    const img = new Image();
                    img.src = 'data:image/png;base64,' + data;
                    await img.decode();
                    const c = document.createElement('canvas');
                    c.width = img.width; c.height = img.height;
                    const ctx = c.getContext('2d');
                    ctx.drawImage(img, 0, 0);
                    const px = ctx.getImageData(0, 0, c.width, c.height).data;
                    const seen = new Set();
                    let ink = 0;
                    for (let i = 0; i < px.length; i += 4 * 7) {
                        seen.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
                        if (px[i] + px[i + 1] + px[i + 2] < 600) ink++;
                    }
                    return {distinct: seen.size, ink: ink, w: c.width, h: c.height};
                }""",
                data,
            )
        finally:
            browser.close()
    assert not errors, f"console errors: {errors}"
    assert not dialogs, f"dialogs opened: {dialogs}"
    assert shot.stat().st_size > 20_000
    assert colours["distinct"] > 20 and colours["ink"] > 1000, f"blank screenshot: {colours}"
    print(f"screenshot: {shot} ({colours['w']}x{colours['h']}, {len(plots)} plots)")


def test_demo_report_reads_at_1280_px(demo_run, tmp_path: Path) -> None:
    """The shared demo run's last report in Chromium at 1,280 px: the findings tables fit the
    window with a cited-page column wide enough to read (URLs wrap), rows of a sane height,
    evidence passages with marked terms, and the inputs-not-read section with its rows; a
    screenshot of the findings (kept in the test's tmp dir) is not blank."""
    executable = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    pages = sorted(demo_run.derived.glob("report/observation_date=*/codebook=v1/index.html"))
    assert pages, "the demo run wrote no report"
    shot = tmp_path / "findings.png"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=executable, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(pages[-1].as_uri(), wait_until="load")
            sizes = page.evaluate(
                """() => {
                    const box = el => { const r = el.getBoundingClientRect();
                                        return {w: r.width, h: r.height}; };
                    const tables = [...document.querySelectorAll('table.findings')];
                    return {
                        doc: document.documentElement.scrollWidth,
                        tables: tables.map(t => ({...box(t),
                            rows: t.querySelectorAll('tr.finding').length})),
                        rows: [...document.querySelectorAll('tr.finding')].map(r => box(r).h),
                        pageCols: [...document.querySelectorAll('td.page')].map(c => box(c).w),
                        urls: [...document.querySelectorAll('td.page .url, td.archived .url')]
                            .map(u => box(u).w),
                        passages: [...document.querySelectorAll('td.passage')]
                            .filter(p => p.textContent.trim() !== 'no passage')
                            .map(p => ({...box(p), marks: [...p.querySelectorAll('mark')]
                                .filter(m => box(m).w > 0).length})),
                        claimMarks: [...document.querySelectorAll('td.claim mark')]
                            .filter(m => box(m).w > 0).length,
                        inputs: [...document.querySelectorAll('#inputs tr.rejected')]
                            .map(r => box(r)),
                        inputsTable: box(document.querySelector('#inputs table') ||
                                         document.body),
                    };
                }"""
            )
            finding = page.locator("table.findings").nth(1)
            finding.scroll_into_view_if_needed()
            finding.screenshot(path=str(shot))
        finally:
            browser.close()
    assert sizes["doc"] <= 1280, f"the page scrolls sideways: {sizes['doc']} px"
    assert len(sizes["tables"]) == 2 and all(t["rows"] for t in sizes["tables"]), sizes["tables"]
    for t in sizes["tables"]:
        assert 1000 <= t["w"] <= 1280, t
        assert t["h"] / t["rows"] < 260, f"rows too tall to read: {t}"
    assert max(sizes["rows"]) < 600, max(sizes["rows"])
    assert min(sizes["pageCols"]) >= 140, min(sizes["pageCols"])
    assert sizes["urls"] and min(sizes["urls"]) > 100, min(sizes["urls"])
    assert sizes["passages"] and min(p["w"] for p in sizes["passages"]) >= 250
    assert sum(p["marks"] for p in sizes["passages"]) > 0 and sizes["claimMarks"] > 0
    assert sizes["inputs"] and all(r["h"] > 0 and r["w"] > 600 for r in sizes["inputs"])
    assert shot.stat().st_size > 20_000
