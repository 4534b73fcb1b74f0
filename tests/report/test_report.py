"""The report asset: one self-contained, escaped page per date × codebook, materialized with
Dagster on contract-shaped tables (the browser test opens the same page in Chromium)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import dagster as dg
import pytest
from _contract_tables import DATE, PAYLOAD, VERSION, planted_world

from assets.metrics import metrics as metrics_asset
from assets.report import report as report_asset
from citeaudit.metrics import METRICS
from pipelines import partitions
from pipelines.partitions import judged_key
from pipelines.resources import PathsResource

DATES = (DATE, "2026-11-02")


def build_reports(
    tmp: Path, *, with_omission: bool = True
) -> tuple[Path, dg.ExecuteInProcessResult]:
    """Plant the world, materialize metrics + report for both dates; return (derived, last)."""
    raw, derived = tmp / "raw", tmp / "derived"
    planted_world(raw, derived, DATES, with_omission=with_omission)
    instance = dg.DagsterInstance.ephemeral()
    partitions.register(instance, answer_dates=DATES, versions=[VERSION])
    paths = PathsResource(raw_dir=str(raw), derived_dir=str(derived))
    result = None
    for date in DATES:
        result = dg.materialize([metrics_asset, report_asset], partition_key=judged_key(
            date, VERSION), instance=instance, resources={"paths": paths})
        assert result.success
    return derived, result


def report_path(derived: Path, date: str = DATES[-1]) -> Path:
    return derived / "report" / f"observation_date={date}" / f"codebook={VERSION}" / "index.html"


class _Collect(HTMLParser):
    """Tags, attributes, ids and in-page link targets of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            self.attrs.append((tag, name, value))
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value:
                self.hrefs.append(value)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dg.ExecuteInProcessResult]:
    return build_reports(tmp_path_factory.mktemp("report"))


def test_report_is_self_contained_escaped_and_linked(built) -> None:
    derived, _ = built
    html = report_path(derived).read_text(encoding="utf-8")
    page = _Collect()
    page.feed(html)
    # nothing executable, nothing fetched: no script, no event handler, no external resource
    assert "script" not in page.tags and "img" not in page.tags and "link" not in page.tags
    assert not [a for a in page.attrs if a[1].startswith("on")], "an event handler attribute"
    assert not [a for a in page.attrs if a[1] == "src"]
    assert all(h.startswith("#") for h in page.hrefs), "a link leaves the page"
    assert "default-src 'none'" in html
    # the planted payloads are shown as text (escaped), in the title cell, URL and header
    assert html.count("&lt;script&gt;window.__pwned") >= 3
    assert PAYLOAD not in html
    # every in-page link resolves; every metric has its definition anchor
    missing = sorted({h[1:] for h in page.hrefs} - page.ids)
    assert not missing, f"links without a target: {missing}"
    assert {f"def-{m.name}" for m in METRICS} <= page.ids
    # headline per engine, plots with marks, the sections of the issue
    for engine in ("alpha", "beta", "all engines"):
        assert f"<th>{engine}</th>" in html
    assert html.count('<svg class="plot"') >= 10
    assert len(re.findall(r'class="mark', html)) > 50
    for section in ("L1 existence verdict breakdown", "Support verdict breakdown",
                    "Omission findings and policy actions", "Review queue",
                    "Annotator agreement", "Trend over observation dates"):
        assert section in html
    # agreement as the support stage wrote it, undefined statistics with their reason
    assert "Krippendorff&#39;s alpha" in html and ">0.710<" in html and ">0.640<" in html
    assert "undefined: no item has two or more human judgments" in html
    # the trend spans both dates of the codebook
    assert f"{DATES[0]}, {DATES[1]}" in html


def test_report_materialization_has_summary_and_plot(built) -> None:
    derived, result = built
    mats = [m for m in result.get_asset_materialization_events()
            if m.asset_key == dg.AssetKey("report")]
    meta = mats[-1].materialization.metadata
    assert "| engine |" in meta["summary"].value and "alpha" in meta["summary"].value
    assert meta["plot"].value.startswith("![headline rates by engine](data:image/svg+xml;base64,")
    assert Path(meta["plot_path"].value).read_text().startswith('<svg class="plot"')
    assert Path(meta["path"].value) == report_path(derived)


def test_report_names_absent_inputs_instead_of_a_zero(tmp_path: Path) -> None:
    derived, _ = build_reports(tmp_path, with_omission=False)
    html = report_path(derived).read_text(encoding="utf-8")
    assert "Inputs not available for this date × codebook" in html
    assert "omission_endpoints (no rate is reported, not a zero)" in html
    # omission cell in the headline says why, never 0.0%
    row = re.search(r"<th>all engines</th>(.*?)</tr>", html, re.S).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    omission = [c for c in cells if 'href="#def-omission_rate"' in c]
    assert len(omission) == 1 and ">input missing<" in omission[0], omission
    assert "%" not in re.sub(r'title="[^"]*"', "", omission[0])


def test_report_shows_what_it_hides(built) -> None:
    """No bare dots that look exact, no vanishing rows, no literal None: a one-cluster row is
    a hollow marker labelled "no interval (1 cluster)", an engine without units is a "no
    units" row, every plot row carries n and u, higher-is-worse metrics are marked."""
    derived, _ = built
    html = report_path(derived).read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", " ", html)
    assert not re.search(r"\bNone\b", text), "a literal None on the page"
    rates = html[html.index('<section id="rates">'):html.index('<section id="l1">')]
    # gamma answers one query: its weighted rows have no interval, drawn hollow and labelled
    hollow = re.findall(r'<circle class="mark est hollow"[^>]*fill="#ffffff"', rates)
    assert len(hollow) >= 5, len(hollow)
    assert rates.count(">no interval (1 cluster)</text>") == len(hollow)
    # gamma has no source-risk tuple: its omission row says so instead of vanishing
    omission = rates[rates.index('id="plot-omission_rate"'):]
    omission = omission[:omission.index("</svg>")]
    assert '>gamma</text>' in omission and ">no units</text>" in omission
    assert ">n=0 u=0</text>" in omission
    # every plot row shows its counts: labels and counts come in equal numbers
    for plot in re.findall(r'<svg class="plot".*?</svg>', rates, re.S):
        rows = len(re.findall(r'text-anchor="end"(?: font-weight="bold")?>', plot))
        assert len(re.findall(r'class="counts"', plot)) == rows, plot[:200]
    # higher is worse: marked in the plot heading, the headline column and drawn in orange
    dead = rates[rates.index('id="plot-dead_rate"'):]
    assert "↓ higher is worse" in dead[:400] and 'fill="#b34700"' in dead[:dead.index("</svg>")]
    assert "page dead (L1) ↓" in html
    # the dead-citation table: capture time and archived reference; no title shows the URL
    l1 = html[html.index('<section id="l1">'):html.index('<section id="support">')]
    assert "<th>page check (L1)</th><th>claim</th><th>evidence signal</th><th>passage</th>" in l1
    assert '<span class="capture">2026-11-02T06:00:00+00:00</span>' in l1
    assert ('<span class="url">https://example.org/a01</span> · HTTP 404 · sha256 abababababab'
            in l1)
    assert '<span class="title">https://example.org/a07</span>' in l1
    # the paper's definitions beside ours, and which rows of the support table are pairs
    assert "the paper's definition beside ours" in html
    assert 'href="#def-liu_citation_precision"' in html and "Citation F1 (Liu et al. 2023)" in html
    assert "Rows count claim-citation pairs" in html
    assert "Definition:</strong> Liu, Zhang &amp; Liang (2023)" in html


def test_run_summary_says_which_support_items_are_pairs_and_which_statements(demo_run) -> None:
    """The summary's support split: claim-citation pairs and statements judged as a whole,
    counted here from the support_labels parquet files, per codebook."""
    import duckdb
    from rich.console import Console

    from citeaudit.report.summary import _render_support_levels

    console = Console(record=True, width=160)
    rows = _render_support_levels(demo_run.derived, console)
    glob = str(demo_run.derived / "support_labels" / "*" / "*" / "data.parquet")
    expect = duckdb.sql(
        f"SELECT codebook, citation_id IS NOT NULL AS pair, count(*) FROM read_parquet("
        f"'{glob}', hive_partitioning = true) GROUP BY ALL").fetchall()
    got = {(r["codebook"], r["judged"] == "claim-citation pairs"): r["items"] for r in rows}
    assert got == {(c, p): n for c, p, n in expect}
    text = console.export_text()
    assert "claim-citation pairs" in text and "pairs vs statements" in text


def test_every_rejected_or_unread_input_is_counted_with_a_first_example(demo_run) -> None:
    """The summary and each report list every rejected answer line, support label and
    source-risk record by reason with its first example (file:line): none vanishes."""
    import duckdb
    from rich.console import Console

    from citeaudit.report import summary

    row, _ = summary.collect(demo_run.derived)
    got = {(r["input"], r["reason"]): r["n"] for r in row["inputs_not_read"]}
    d = demo_run.derived
    expect = dict(duckdb.sql(
        f"SELECT (source, reason), count(*) FROM read_parquet('{d}/rejected_inputs/*/*.parquet',"
        " hive_partitioning = true) GROUP BY ALL").fetchall())
    expect |= dict(duckdb.sql(
        "SELECT ('support labels (codebook ' || codebook || ')', reason), count(*) FROM "
        f"read_parquet('{d}/rejected_annotations/*/*/*.parquet', hive_partitioning = true) "
        "GROUP BY ALL").fetchall())
    assert expect and all(got[tuple(k)] == n for k, n in expect.items()), (got, expect)
    assert any(k[0].startswith("support labels") for k in got)
    assert all(r["example"].split(" ")[0].count(":") == 1 for r in row["inputs_not_read"]
               if r["first_line"] is not None)
    console = Console(record=True, width=200)
    summary.render_inputs_not_read(row["inputs_not_read"], console)
    text = console.export_text()
    assert "inputs not read, by reason" in text and "unknown_label" in text

    pages = sorted(d.glob("report/observation_date=*/codebook=*/index.html"))
    assert pages
    for page in pages:
        date = page.parent.parent.name.split("=", 1)[1]
        version = page.parent.name.split("=", 1)[1]
        html = page.read_text(encoding="utf-8")
        section = html[html.index('<section id="inputs">'):html.index('<section id="review">')]
        labels = duckdb.sql(
            f"SELECT count(*) FROM read_parquet('{d}/rejected_annotations/*/*/*.parquet', "
            f"hive_partitioning = true) WHERE observation_date::VARCHAR = '{date}' "
            f"AND codebook = '{version}'").fetchall()[0][0]
        rows = section.count('<tr class="rejected">')
        if labels:
            assert f"support labels (codebook {version})" in section
        assert rows > 0 or "None: every input" in section


def test_no_cost_is_said_and_the_period_sits_beside_the_last_date(built) -> None:
    """A cost metric without recorded cost reads "no cost recorded", never 0; the page shows
    the pooled counts over every date beside the last date's headline."""
    from citeaudit.report import headline as hl

    empty = {"metric": "cost_per_served_answer", "estimate": None, "unresolved": 4}
    assert hl.fmt_cell(empty) == "no cost recorded (u=4)"
    trend = [{"observation_date": d, "metric": "dead_rate", "margin": "overall",
              "engine": "all", "numerator": k, "denominator": 10, "unresolved": 1,
              "reason": None} for k, d in ((1, "2026-11-01"), (3, "2026-11-02"))]
    dates, cells = hl.period_cells(trend)
    dead = next(c for c in cells if c["metric"] == "dead_rate")
    assert dates == ["2026-11-01", "2026-11-02"]
    assert hl.fmt_period(dead) == "20.0% n=20 u=2"
    assert hl.fmt_period(next(c for c in cells if c["metric"] == "omission_rate")) == "no dates"
    derived, _ = built
    html = report_path(derived).read_text(encoding="utf-8")
    period = html[html.index('id="period"'):html.index("</table>", html.index('id="period"'))]
    assert f"{DATES[0]} – {DATES[-1]} (2 dates)" in period
    assert period.count('<td class="num">') == len(hl.HEADLINE)
    assert '<section id="glossary">' in html and "<dt>unresolved (u)</dt>" in html


def test_summary_of_one_date(demo_run, capsys) -> None:
    """`citeaudit summary --date D` counts that date only; a bad date is one line and exit 2."""
    import duckdb

    from citeaudit import cli
    from citeaudit.report import summary

    d = demo_run.derived
    per_day = dict(duckdb.sql(
        f"SELECT observation_date::VARCHAR, count(*) FROM read_parquet('{d}/answers/*/*.parquet',"
        " hive_partitioning = true) GROUP BY ALL").fetchall())
    assert len(per_day) >= 2
    day = sorted(per_day)[0]
    row, _ = summary.collect(d, day)
    everything, _ = summary.collect(d)
    assert row["answers"] == per_day[day] < everything["answers"] == sum(per_day.values())
    assert row["dates"] == 1
    # every block counts that date only, the support block too (support_labels per codebook)
    from citeaudit.support import summary as support_summary

    labels = dict(duckdb.sql(
        f"SELECT codebook || '|' || observation_date::VARCHAR, count(*) FROM read_parquet("
        f"'{d}/support_labels/*/*/*.parquet', hive_partitioning = true) GROUP BY ALL"
    ).fetchall())
    con = summary.open_dated(d, day)
    try:
        support_rows = support_summary.collect(d, con)
    finally:
        con.close()
    assert support_rows, "the demo has support labels on its first date"
    for r in support_rows:
        assert r["items"] == labels[f"{r['codebook']}|{day}"]
    assert {r["codebook"]: r["items"] for r in support_summary.collect(d)} == {
        b: sum(n for k, n in labels.items() if k.startswith(f"{b}|"))
        for b in {k.split("|")[0] for k in labels}}
    assert cli.main(["summary", "--derived", str(d), "--raw", str(demo_run.raw),
                     "--date", day]) == 0
    out = capsys.readouterr().out
    assert f"citeaudit run summary · {day}" in out
    assert "counts every date" not in out
    assert f"observation_date={day}" in out and f"headline per engine · {day}" in out
    assert cli.main(["summary", "--derived", str(d), "--date", "yesterday"]) == 2
    assert "--date yesterday: not a date" in capsys.readouterr().err


def test_the_demo_l1_breakdown_shows_rendered_passes_and_shells_apart(demo_run) -> None:
    """The demo's planted script-rendered pages (first date): a static shell is
    ``unresolved_script_shell``, one captured with its rendered DOM is ``pass_rendered`` (a
    pass: the rate counts it), each in the metrics breakdown and the report's L1 table."""
    import json

    import duckdb

    first = sorted(demo_run.truth["dates"])[0]
    glob = demo_run.derived / "citation_existence" / f"observation_date={first}" / "*" / \
        "data.parquet"
    rows = {r[0]: r[1:] for r in duckdb.sql(
        f"SELECT citation_id, verdict, reason, capture_fidelity FROM read_parquet('{glob}', "
        "hive_partitioning = true) WHERE codebook = 'v1' AND citation_id IN "
        "('cit-al-script_shell', 'cit-al-rendered_by_browser', 'cit-al-in_window')").fetchall()}
    assert rows == {"cit-al-script_shell": ("unresolved", "script_shell", "static"),
                    "cit-al-rendered_by_browser": ("pass", "ok", "rendered"),
                    "cit-al-in_window": ("pass", "ok", "static")}
    metrics = demo_run.derived / "metrics" / f"observation_date={first}" / "codebook=v1" / \
        "data.parquet"
    (breakdown,) = duckdb.sql(
        f"SELECT breakdown FROM read_parquet('{metrics}') WHERE metric = 'existence_rate' "
        "AND margin = 'overall'").fetchall()[0]
    counts = json.loads(breakdown)
    assert counts["pass_rendered"] == 1 and counts["unresolved_script_shell"] >= 1
    assert counts["pass"] >= 1
    html = (demo_run.derived / "report" / f"observation_date={first}" / "codebook=v1"
            / "index.html").read_text(encoding="utf-8")
    table = html[html.index('id="l1-soft404-walls"'):]
    assert "<th>pass_rendered</th>" in table and "<th>unresolved_script_shell</th>" in table
