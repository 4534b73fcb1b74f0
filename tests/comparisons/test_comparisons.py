"""The comparisons table and the alerts on small tables, the codebook's alert rules, and the
whole stage on the shared demo run (the planted regression caught, the null pair silent,
``citeaudit compare`` exit codes)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from citeaudit import cli, codebook
from citeaudit.codebook import AlertRule
from citeaudit.comparisons import alerts, compute, units
from citeaudit.demo_corpus import codebooks as demo_codebooks
from citeaudit.demo_corpus import regression

D1, D2 = "2026-11-01", "2026-11-02"


def _units(rows: list[tuple], version: str | None = None) -> pa.Table:
    """comparison_units rows: (metric, engine, query, resolved, unresolved, sum_wy, sum_w),
    every answer of ``version``."""
    cols = list(zip(*rows, strict=True))
    return pa.table({
        "metric": list(cols[0]), "engine": list(cols[1]), "domain": ["news"] * len(rows),
        "system_version": [version] * len(rows), "query_id": list(cols[2]),
        "units": [r + u for r, u in zip(cols[3], cols[4], strict=True)],
        "resolved": list(cols[3]), "unresolved": list(cols[4]), "sum_wy": list(cols[5]),
        "sum_w": list(cols[6])}, schema=units.SCHEMA)


def _panel(engine: str, dead: dict[str, int], per_query: int = 4, weight: float = 1.0,
           unresolved: int = 0) -> list[tuple]:
    return [("dead_rate", engine, q, per_query, unresolved, weight * k, weight * per_query)
            for q, k in dead.items()]


QUERIES = [f"q{i:03d}" for i in range(40)]


def test_engines_pair_by_query_and_unresolved_stay_beside() -> None:
    a = _panel("a", {q: (1 if i % 4 == 0 else 0) for i, q in enumerate(QUERIES)}, unresolved=1)
    b = _panel("b", {q: (1 if i % 2 == 0 else 0) for i, q in enumerate(QUERIES[5:])})
    table = compute.compare(_units(a + b), D2, "v1", baseline_days=0)
    [row] = [r for r in table.to_pylist() if r["family"] == "engine_vs_engine"]
    assert (row["engine_a"], row["engine_b"]) == ("a", "b")
    assert row["estimate_a"] == pytest.approx(10 / 160)
    assert row["estimate_b"] == pytest.approx(18 / 140)
    assert row["difference"] == pytest.approx(10 / 160 - 18 / 140)
    assert (row["paired_queries"], row["unpaired_queries_a"], row["unpaired_queries_b"]) == \
        (35, 5, 0)
    assert (row["n_units_a"], row["unresolved_a"], row["unresolved_b"]) == (160, 40, 0)
    assert row["ci_low"] < row["difference"] < row["ci_high"]
    assert row["verdict"] == "estimated" and row["reason"] is None
    assert row["method"] == "paired_cluster_linearized"
    assert row["adjustment"] == "holm (1 tests: family × metric)"
    assert row["p_adjusted"] == row["p_value"]
    # only one family: no earlier date, no earlier codebook
    assert set(table.column("family").to_pylist()) == {"engine_vs_engine"}


def test_dates_codebooks_and_the_baseline_window() -> None:
    today = _units(_panel("a", {q: 2 for q in QUERIES}))
    yesterday = _units(_panel("a", {q: 0 for q in QUERIES}))
    before = _units(_panel("a", {q: 1 for q in QUERIES[:20]}))
    table = compute.compare(today, D2, "v2", history={D1: before, "2026-10-31": yesterday},
                            codebooks={"v1": yesterday}, baseline_days=7)
    rows = {(r["family"], r["engine_a"]): r for r in table.to_pylist()}
    prev = rows[("vs_previous_date", "a")]
    assert (prev["period_a"], prev["period_b"]) == (D2, D1)
    assert prev["estimate_b"] == pytest.approx(0.25) and prev["paired_queries"] == 20
    base = rows[("vs_baseline", "a")]
    assert base["period_b"] == "2026-10-31..2026-11-01"
    # the window pools the two days: 20 dead of 240 units over 40 queries (one cluster each)
    assert base["estimate_b"] == pytest.approx(20 / 240) and base["paired_queries"] == 40
    cb = rows[("vs_codebook", "a")]
    assert (cb["codebook_a"], cb["codebook_b"]) == ("v2", "v1")
    assert cb["difference"] == pytest.approx(0.5) and cb["significant"]
    # engine "all" pools the engines: here one engine, the same numbers
    assert rows[("vs_previous_date", "all")]["difference"] == prev["difference"]


def test_a_side_without_resolved_units_is_unresolved_not_zero() -> None:
    a = _panel("a", {q: 1 for q in QUERIES})
    b = [("dead_rate", "b", q, 0, 3, 0.0, 0.0) for q in QUERIES]
    [row] = compute.compare(_units(a + b), D2, "v1", baseline_days=0).to_pylist()
    assert row["verdict"] == "unresolved" and row["reason"] == "no_resolved_units"
    assert row["difference"] is None and row["p_value"] is None
    assert row["unresolved_b"] == 120 and row["significant"] is None


def test_too_few_clusters_is_not_significance() -> None:
    """One query's 69-point jump on a side of 8 queries (as in ``make demo``'s omission rows):
    the difference is reported, without interval or p-value, never significant, and an alert
    rule that would fire on anything (alpha 0.99, any direction) stays silent."""
    few = [f"q{i}" for i in range(8)]
    a = _panel("a", {q: (4 if q == "q0" else 3) for q in few})
    b = _panel("b", {q: (0 if q == "q0" else 1) for q in few})
    [row] = compute.compare(_units(a + b), D2, "v1", baseline_days=0).to_pylist()
    assert row["verdict"] == "estimated" and row["reason"] == "too_few_clusters"
    assert row["difference"] == pytest.approx(25 / 32 - 7 / 32)
    assert (row["ci_low"], row["ci_high"], row["se"], row["p_value"], row["p_adjusted"],
            row["significant"]) == (None,) * 6
    assert "8 and 8 queries" in row["note"] and "never an alert" in row["note"]
    from citeaudit.comparisons import report
    shown = report._row(row)
    assert shown["diff_text"] == "+56.2 pp" and shown["ci_text"] == \
        "(no interval: too_few_clusters)"
    rule = AlertRule(name="any", metric="*", family="*", direction="either", alpha=0.99)
    assert alerts.evaluate([rule], compute.compare(_units(a + b), D2, "v1", baseline_days=0)
                           ).num_rows == 0
    # the same difference on 10 queries a side is tested (and, here, significant)
    ten = [f"q{i}" for i in range(10)]
    a10 = _panel("a", {q: 3 for q in ten})
    b10 = _panel("b", {q: 1 for q in ten})
    [tested] = compute.compare(_units(a10 + b10), D2, "v1", baseline_days=0).to_pylist()
    assert tested["reason"] is None and tested["significant"]
    assert alerts.evaluate([rule], compute.compare(_units(a10 + b10), D2, "v1",
                                                   baseline_days=0)).num_rows == 1


def test_too_few_events_is_not_significance() -> None:
    """40 queries a side, but every dead citation in 3 of them: too few events to test."""
    a = _panel("a", {q: (4 if i < 3 else 0) for i, q in enumerate(QUERIES)})
    b = _panel("b", {q: 0 for q in QUERIES})
    [row] = compute.compare(_units(a + b), D2, "v1", baseline_days=0).to_pylist()
    assert row["reason"] == "too_few_events" and row["p_value"] is None
    assert row["difference"] == pytest.approx(12 / 160)
    # the same with events in 5 queries is tested; so is the mirror (non-events in 5)
    a5 = _panel("a", {q: (4 if i < 5 else 0) for i, q in enumerate(QUERIES)})
    [five] = compute.compare(_units(a5 + b), D2, "v1", baseline_days=0).to_pylist()
    assert five["reason"] is None and five["p_value"] is not None
    full = _panel("a", {q: (0 if i < 3 else 4) for i, q in enumerate(QUERIES)})
    top = _panel("b", {q: 4 for q in QUERIES})
    [mirror] = compute.compare(_units(full + top), D2, "v1", baseline_days=0).to_pylist()
    assert mirror["reason"] == "too_few_events"


def test_the_floor_does_not_apply_to_means() -> None:
    """Tokens per answer: no events to count, only the clusters."""
    rows = [("cost_per_served_answer", e, q, 1, 0, float(v), 1.0)
            for e, v in (("a", 2000), ("b", 1000)) for q in QUERIES[:12]]
    rows = [(m, e, q, r, u, y + (i % 3), w) for i, (m, e, q, r, u, y, w) in enumerate(rows)]
    [row] = compute.compare(_units(rows), D2, "v1", baseline_days=0).to_pylist()
    assert row["reason"] is None and row["significant"]


def test_weights_are_respected() -> None:
    """Queries weighted 1/inclusion_prob: the estimates are the Hájek ratios."""
    a = (_panel("a", {q: 4 for q in QUERIES[:10]}, weight=10.0)
         + _panel("a", {q: 0 for q in QUERIES[10:]}, weight=1.0))
    b = _panel("b", {q: 0 for q in QUERIES})
    [row] = compute.compare(_units(a + b), D2, "v1", baseline_days=0).to_pylist()
    assert row["estimate_a"] == pytest.approx(400 / (400 + 120))


def test_rerun_gives_the_same_bytes() -> None:
    a = _units(_panel("a", {q: i % 3 for i, q in enumerate(QUERIES)})
               + _panel("b", {q: i % 2 for i, q in enumerate(QUERIES)}))
    hist = {D1: _units(_panel("a", {q: 1 for q in QUERIES}))}
    first = compute.compare(a, D2, "v1", history=hist)
    second = compute.compare(a, D2, "v1", history=hist)
    assert first.equals(second)


def _row(**over: object) -> dict:
    row = {"family": "vs_previous_date", "metric": "dead_rate", "engine_a": "x",
           "engine_b": "x", "period_a": D2, "period_b": D1, "codebook_a": "v1",
           "codebook_b": "v1", "estimate_a": 0.2, "estimate_b": 0.08, "difference": 0.12,
           "ci_low": 0.05, "ci_high": 0.19, "p_value": 0.001, "p_adjusted": 0.001,
           "higher_is_better": False, "paired_queries": 40, "verdict": "estimated"}
    row.update(over)
    return row


def _table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=pa.schema(
        [f for f in compute.SCHEMA if f.name in rows[0]]))


def test_alert_rules_read_direction_effect_family_and_pairs() -> None:
    worse = AlertRule(name="w", metric="dead_rate", direction="worse", min_effect=0.05)
    assert alerts.evaluate([worse], _table([_row()])).num_rows == 1
    # a higher existence rate is better: the same difference is not worse
    assert alerts.evaluate([worse.__class__(name="e", metric="*", direction="worse")],
                           _table([_row(metric="existence_rate", higher_is_better=True)])
                           ).num_rows == 0
    assert alerts.evaluate([AlertRule(name="big", metric="*", min_effect=0.2)],
                           _table([_row()])).num_rows == 0
    assert alerts.evaluate([AlertRule(name="f", family="engine_vs_engine")],
                           _table([_row()])).num_rows == 0
    assert alerts.evaluate([worse], _table([_row(verdict="unresolved", difference=None,
                                                 p_value=None, p_adjusted=None)])
                           ).num_rows == 0
    pair = AlertRule(name="p", engine="x", versus="y", family="*", direction="either")
    rows = [_row(family="engine_vs_engine", engine_b="y"),
            _row(family="engine_vs_engine", engine_b="z")]
    fired = alerts.evaluate([pair], _table(rows)).to_pylist()
    assert [(f["engine_a"], f["engine_b"], f["tests"]) for f in fired] == [("x", "y", 1)]


def test_a_rule_adjusts_over_every_comparison_it_watches() -> None:
    """p 0.02 alone fires at 0.05; among three watched rows (Holm: x3) it does not."""
    rule = AlertRule(name="r", metric="dead_rate", direction="either")
    one = [_row(p_value=0.02)]
    three = one + [_row(engine_a="y", engine_b="y", p_value=0.5),
                   _row(engine_a="z", engine_b="z", p_value=0.9)]
    assert alerts.evaluate([rule], _table(one)).num_rows == 1
    assert alerts.evaluate([rule], _table(three)).num_rows == 0


def _codebook(tmp_path: Path, rules: object) -> Path:
    doc = demo_codebooks.codebook("v1")
    doc["alerts"] = rules
    path = tmp_path / "v1.yaml"
    import yaml

    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(("rules", "key", "words"), [
    ("dead_rate", "alerts", "expected a list of rules"),
    ([{"metric": "dead_rate", "direction": "up"}], "alerts[0].direction", "'up' is not one of"),
    ([{"metric": "dead_rate", "alpha": 1.5}], "alerts[0].alpha", "outside"),
    ([{"metric": "dead_rate", "min_effect": -1}], "alerts[0].min_effect", "outside"),
    ([{"metric": "dead_rate", "colour": "red"}], "alerts[0]", "unknown key(s) colour"),
    ([{"engine": "x"}], "alerts[0].metric", "required"),
    ([{"metric": "dead_rate", "versus": "y"}], "alerts[0].versus", "the other engine"),
    ([{"metric": "dead_rate"}, {"metric": "dead_rate"}], "alerts[1].name", "names two rules"),
])
def test_bad_alert_rules_name_file_key_and_fix(tmp_path: Path, rules: object, key: str,
                                               words: str) -> None:
    path = _codebook(tmp_path, rules)
    with pytest.raises(codebook.CodebookError) as err:
        codebook.load(path)
    assert f"{path}: {key}: " in str(err.value) and words in str(err.value)


def test_an_unknown_metric_is_named_with_the_known_ones(tmp_path: Path) -> None:
    book = codebook.load(_codebook(tmp_path, [{"metric": "dead_rates"}]))
    with pytest.raises(codebook.CodebookError, match=r"alerts\[0\]\.metric: 'dead_rates' is "
                                                     r"not a metric .* dead_rate"):
        alerts.check_rules(book)


# ---------------------------------------------------------------- the demo run


def _read(derived: Path, table: str) -> list[dict]:
    con = duckdb.connect()
    return con.sql(f"SELECT * FROM read_parquet('{derived}/{table}/*/*/*.parquet', "
                   "hive_partitioning = true, union_by_name = true)").to_arrow_table().to_pylist()


def test_demo_estimates_are_the_metrics_engine_rows(demo_run) -> None:
    metrics = {(str(r["observation_date"]), r["codebook"], r["metric"], r["engine"]):
               r["estimate"] for r in _read(demo_run.derived, "metrics")
               if r["margin"] == "engine" and r["verdict"] == "estimated"}
    rows = [r for r in _read(demo_run.derived, "comparisons")
            if r["family"] == "engine_vs_engine" and r["verdict"] == "estimated"]
    assert len(rows) > 100
    for r in rows:
        key = (str(r["observation_date"]), r["codebook"], r["metric"])
        for side in ("a", "b"):
            expected = metrics.get((*key, r[f"engine_{side}"]))
            if expected is not None:
                assert r[f"estimate_{side}"] == pytest.approx(expected, abs=1e-9), (r, side)


def _dead_share(day: int, engine: str) -> float:
    """Share of an engine's web citations on a day that point at a page dead from the start,
    in the default demo corpus (600 answers over 3 days: ``make demo``), from the generator's
    own answer builder (no crawl, no pipeline)."""
    import math

    from citeaudit.demo_corpus import vocab
    from citeaudit.demo_corpus.answers import AnswerBuilder
    from citeaudit.demo_corpus.world import Panel, Params, World, web_source

    params = Params()
    world = World.for_params(params)
    per_day = [params.answers // params.days] * params.days
    builder = AnswerBuilder(world, Panel(params.seed, math.ceil(max(per_day) / 4)), per_day)
    dead = total = 0
    for slot in range(vocab.ENGINES.index(engine), per_day[day], len(vocab.ENGINES)):
        for claim in builder.build(day, slot).claims:
            for c in claim.citations:
                if c.kind == "web":
                    total += 1
                    dead += web_source(world, c.index).plan == "dead"
    return dead / total


def test_the_demo_plants_the_regression_on_the_last_date_only() -> None:
    """``make demo``'s corpus: the regressed engine's citations of pages dead from the start
    rise from the first days' share to well above it on the last date; the null pair's two
    engines and the other days are untouched by the plant."""
    before = [_dead_share(d, regression.ENGINE) for d in (0, 1)]
    after = _dead_share(2, regression.ENGINE)
    assert max(before) < 0.1 and after > 0.2, (before, after)
    for engine in regression.NULL_PAIR:
        assert _dead_share(2, engine) < 0.1


def test_demo_alerts_follow_the_comparisons_and_the_null_pair_is_silent(demo_run) -> None:
    """The shared demo run (150 answers over 2 days: too few to detect the plant, which
    ``make demo``'s 600 answers over 3 days do, docs/comparisons.md) carries the demo
    codebooks' rules: every alert row is a comparisons row the rule fires on, the null pair
    never fires, and the regressed engine's dead rate moves up on the last date."""
    dates = demo_run.truth["dates"]
    rows = _read(demo_run.derived, "comparisons")
    fired = _read(demo_run.derived, "alerts")
    assert not [a for a in fired if a["rule"] == "copilot-vs-google-dead-citations"]
    for a in fired:
        match = [r for r in rows if (r["observation_date"], r["codebook"], r["family"],
                                     r["metric"], r["engine_a"], r["engine_b"]) ==
                 (a["observation_date"], a["codebook"], a["family"], a["metric"],
                  a["engine_a"], a["engine_b"])]
        assert len(match) == 1 and match[0]["difference"] == a["difference"]
    [prev] = [r for r in rows if str(r["observation_date"]) == dates[-1]
              and r["codebook"] == "v2" and r["family"] == "vs_previous_date"
              and r["metric"] == "dead_rate" and r["engine_a"] == regression.ENGINE]
    assert prev["difference"] > 0 and prev["verdict"] == "estimated"
    pair = [r for r in rows if r["family"] == "engine_vs_engine" and r["metric"] == "dead_rate"
            and {r["engine_a"], r["engine_b"]} == set(regression.NULL_PAIR)]
    assert pair and not any(r["significant"] for r in pair)


def test_compare_exits_3_exactly_when_an_alert_fires(demo_run, capsys) -> None:
    dates = demo_run.truth["dates"]
    args = ["compare", "--raw", str(demo_run.raw), "--derived", str(demo_run.derived)]
    fired = {str(a["observation_date"]) for a in _read(demo_run.derived, "alerts")
             if a["codebook"] == "v2"}
    for date in dates:
        assert cli.main([*args, "--date", date]) == (3 if date in fired else 0)
        out = capsys.readouterr().out
        assert ("ALERT" in out) == (date in fired) and f"What changed on {date}" in out
    assert cli.main([*args, "--date", dates[-1], "--engines",
                     "copilot,google_ai_overview", "--all"]) in (0, 3)
    out = capsys.readouterr().out
    assert "copilot vs google_ai_overview" in out and "copilot-vs-google" not in out
    assert cli.main([*args, "--date", dates[-1], "--engines", "nosuch"]) == 2
    assert "--engines: nosuch not among the engines" in capsys.readouterr().err
    assert cli.main([*args, "--date", "2020-01-01"]) == 2
    assert "run `citeaudit run" in capsys.readouterr().err


def test_compare_exits_3_on_a_planted_alert(demo_run, tmp_path: Path, capsys) -> None:
    """A copy of the demo's raw folder whose codebook lowers the bar (any rise of the
    regressed engine's dead rate, alpha 0.99): the alert fires, exit 3; the derived folder is
    read, never written."""
    import yaml

    raw = tmp_path / "raw"
    (raw / "codebooks").mkdir(parents=True)
    doc = yaml.safe_load((demo_run.raw / "codebooks" / "v2.yaml").read_text(encoding="utf-8"))
    doc["alerts"] = [{"name": "any-rise", "metric": "dead_rate", "engine": regression.ENGINE,
                      "family": "vs_previous_date", "direction": "increase", "alpha": 0.99}]
    (raw / "codebooks" / "v2.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    date = demo_run.truth["dates"][-1]
    code = cli.main(["compare", "--raw", str(raw), "--derived", str(demo_run.derived),
                     "--date", date])
    out = capsys.readouterr().out
    assert code == 3 and f"ALERT any-rise (error): {regression.ENGINE}: dead_rate" in out


def test_versions_are_compared_before_vs_after_on_the_same_queries() -> None:
    """Engine a answered with version m1 yesterday and m2 today (the same 40 queries): the
    vs_version row pairs them by query; a rule on the family fires; two versions of one
    date give one row; no version, no row."""
    before = _units(_panel("a", {q: (1 if i % 10 == 0 else 0) for i, q in enumerate(QUERIES)}),
                    version="m1")
    after = _units(_panel("a", {q: (2 if i % 2 == 0 else 0) for i, q in enumerate(QUERIES)}),
                   version="m2")
    table = compute.compare(after, D2, "v1", history={D1: before}, baseline_days=7)
    [row] = [r for r in table.to_pylist() if r["family"] == "vs_version"
             and r["engine_a"] == "a"]
    assert (row["version_a"], row["version_b"], row["period_a"], row["period_b"]) == \
        ("m2", "m1", D2, D1)
    assert row["estimate_a"] == pytest.approx(40 / 160)
    assert row["estimate_b"] == pytest.approx(4 / 160)
    assert row["paired_queries"] == 40 and row["significant"]
    rule = AlertRule(name="model-update", metric="dead_rate", engine="a", family="vs_version",
                     direction="worse")
    [fired] = alerts.evaluate([rule], table).to_pylist()
    assert (fired["version_a"], fired["version_b"]) == ("m2", "m1")
    assert "version m2" in fired["detail"] and "version m1" in fired["detail"]
    # an A/B night: both versions on this date, half the panel each
    ab = pa.concat_tables([
        _units(_panel("a", {q: 1 for q in QUERIES[:20]}), version="m2"),
        _units(_panel("a", {q: 0 for q in QUERIES[20:]}), version="m1")])
    rows = [r for r in compute.compare(ab, D2, "v1", baseline_days=0).to_pylist()
            if r["family"] == "vs_version"]
    assert [(r["engine_a"], r["version_a"], r["version_b"], r["paired_queries"])
            for r in rows] == [("a", "m1", "m2", 0), ("all", "m1", "m2", 0)]
    # no version on any answer (and units written before the column existed): no such row
    plain = _units(_panel("a", {q: 1 for q in QUERIES}))
    assert "vs_version" not in compute.compare(plain, D2, "v1", history={D1: plain.drop(
        ["system_version"])}).column("family").to_pylist()


def test_import_label_is_the_answers_system_version(tmp_path: Path) -> None:
    """``citeaudit import openai ... --label m2`` writes system_version on every answer."""
    import json

    response = {"object": "response", "id": "resp_1", "created_at": 1764504000,
                "model": "gpt-x", "output": [
                    {"type": "web_search_call", "action": {"query": "capital of France",
                     "sources": [{"url": "https://wiki.example/Paris"}]}},
                    {"type": "message", "content": [{
                        "type": "output_text", "text": "Paris is the capital of France.",
                        "annotations": [{"type": "url_citation", "start_index": 24,
                                         "end_index": 31, "url": "https://example.org/p"}]}]}]}
    src = tmp_path / "r.json"
    src.write_text(json.dumps(response), encoding="utf-8")
    out = tmp_path / "raw"
    assert cli.main(["import", "openai", str(src), "--out", str(out), "--label", "m2"]) == 0
    [answers] = list((out / "answers").rglob("*.jsonl"))
    rows = [json.loads(x) for x in answers.read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["system_version"] == "m2" for r in rows)
    assert rows[0]["retrieved_not_cited"] == [{"url": "https://wiki.example/Paris"}]


def test_the_baseline_band_excludes_today_exactly_when_the_difference_does(tmp_path) -> None:
    """The trend plots' band: today's estimate lies outside it exactly when the interval of
    the difference from the baseline excludes 0; a row below the floor has no band."""
    from citeaudit import parquet_io
    from citeaudit.comparisons import report
    from citeaudit.report import svg

    today = _units(_panel("a", {q: (2 if i % 2 == 0 else 0) for i, q in enumerate(QUERIES)}))
    same = _units(_panel("a", {q: (2 if i % 2 == 1 else 0) for i, q in enumerate(QUERIES)}))
    low = _units(_panel("a", {q: (1 if i % 8 == 0 else 0) for i, q in enumerate(QUERIES)}))
    for history, outside in (({D1: low}, True), ({D1: same}, False)):
        table = compute.compare(today, D2, "v1", history=history)
        parquet_io.write_partition(table, tmp_path, "comparisons",
                                   {"observation_date": D2, "codebook": "v1"})
        band = report.baseline_bands(tmp_path, D2, "v1")["dead_rate"]
        [row] = [r for r in table.to_pylist() if r["family"] == "vs_baseline"
                 and r["engine_a"] == "all" and r["metric"] == "dead_rate"]
        assert (not band["low"] <= row["estimate_a"] <= band["high"]) is outside
        assert (row["ci_low"] > 0 or row["ci_high"] < 0) is outside
        assert band["dates"] == (D1, D2) and band["level"] == row["estimate_b"]
        plot = svg.trend_plot({"all engines": [(D1, row["estimate_b"], None, None),
                                               (D2, row["estimate_a"], None, None)]},
                              [D1, D2], title="dead", band=band)
        assert '<g class="band">' in plot and "baseline 2026-11-01" in plot
    few = _units(_panel("a", {q: 1 for q in QUERIES[:5]}))
    parquet_io.write_partition(compute.compare(few, D2, "v1", history={D1: few}), tmp_path,
                               "comparisons", {"observation_date": D2, "codebook": "v1"})
    assert report.baseline_bands(tmp_path, D2, "v1") == {}
