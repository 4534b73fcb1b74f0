"""Inter-annotator agreement on support judgments (the source-risk audit specification and the
three-layer audit, docs/references.md).

Reliability is reported on the original independent human labels (before adjudication):
Krippendorff's alpha (nominal, missing values allowed; the ``krippendorff`` package) over every
item × human annotator, and Cohen's kappa for each pair of human annotators on the items both
judged (``statsmodels.stats.inter_rater.cohens_kappa``), overall and per stratum (engine,
domain). A grader (model) is compared with the adjudicated human label of the items it judged,
as a confusion matrix of counts and an agreement rate; its own labels never enter the human
gold. A statistic that is undefined (fewer than two coders on any item, a single label value)
is a row with ``value`` NULL and a ``note`` saying why, never a zero.
"""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pyarrow as pa

from citeaudit import duck
from citeaudit.codebook import SUPPORT_LABELS

SCHEMA = pa.schema([
    ("stratum", pa.string()), ("statistic", pa.string()), ("annotator_a", pa.string()),
    ("annotator_b", pa.string()), ("label_a", pa.string()), ("label_b", pa.string()),
    ("value", pa.float64()), ("n", pa.int32()), ("note", pa.string()),
])
CODE = {label: i for i, label in enumerate(SUPPORT_LABELS)}
HUMAN_GOLD = "adjudicated_human"


def _row(stratum: str, statistic: str, value: float | None, n: int, note: str | None = None,
         a: str | None = None, b: str | None = None, la: str | None = None,
         lb: str | None = None) -> dict:
    if value is not None and (math.isnan(value) or math.isinf(value)):
        value, note = None, note or "undefined (no variation in the labels)"
    return {"stratum": stratum, "statistic": statistic, "annotator_a": a, "annotator_b": b,
            "label_a": la, "label_b": lb, "value": value, "n": n, "note": note}


def _alphas(units: pa.Table) -> dict[str, dict]:
    """Alpha per stratum from (stratum, unit, code, votes), as value counts per unit."""
    out: dict[str, dict] = {}
    strata = units.column("stratum").to_numpy(zero_copy_only=False)
    unit = units.column("unit").to_numpy()
    codes = units.column("code").to_numpy()
    votes = units.column("votes").to_numpy()
    bounds = np.flatnonzero(strata[1:] != strata[:-1]) + 1 if len(strata) else []
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(strata)], strict=True):
        if hi <= lo:
            continue
        name = str(strata[lo])
        counts = np.zeros((int(unit[lo:hi].max()) + 1, len(SUPPORT_LABELS)))
        np.add.at(counts, (unit[lo:hi], codes[lo:hi]), votes[lo:hi])
        pairable = int((counts.sum(1) >= 2).sum())
        if pairable == 0:
            out[name] = _row(name, "krippendorff_alpha", None, 0,
                             "undefined: no item has two or more human judgments")
            continue
        if int((counts[counts.sum(1) >= 2].sum(0) > 0).sum()) < 2:
            out[name] = _row(name, "krippendorff_alpha", None, pairable,
                             "undefined: every paired human judgment has the same label")
            continue
        value = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
        out[name] = _row(name, "krippendorff_alpha", float(value), pairable,
                         "n = items with two or more human judgments")
    return out


def _kappas(pairs: pa.Table) -> dict[str, list[dict]]:
    """Cohen's kappa per stratum and annotator pair from the pair contingency counts."""
    out: dict[str, list[dict]] = {}
    tables: dict[tuple[str, str, str], np.ndarray] = {}
    for r in pairs.to_pylist():  # one row per non-empty contingency cell: small
        key = (r["stratum"], r["annotator_a"], r["annotator_b"])
        t = tables.setdefault(key, np.zeros((len(SUPPORT_LABELS), len(SUPPORT_LABELS))))
        t[CODE[r["label_a"]], CODE[r["label_b"]]] += r["n"]
    # imported at the call: Dagster's UI, daemon and code server load this module and never
    # need it
    from statsmodels.stats.inter_rater import cohens_kappa
    for (name, a, b), table in sorted(tables.items()):
        n = int(table.sum())
        used = sorted(set(np.nonzero(table.sum(0) + table.sum(1))[0]))
        if len(used) < 2:
            row = _row(name, "cohen_kappa", None, n,
                       "undefined: both annotators used a single label", a, b)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                value = float(cohens_kappa(table[np.ix_(used, used)], return_results=False))
            row = _row(name, "cohen_kappa", value, n, None, a, b)
        out.setdefault(name, []).append(row)
    return out


def _confusion(cells: pa.Table) -> dict[str, list[dict]]:
    """Confusion counts and agreement share per stratum and grader."""
    out: dict[str, list[dict]] = {}
    by: dict[tuple[str, str], list[dict]] = {}
    for r in cells.to_pylist():
        by.setdefault((r["stratum"], r["grader"]), []).append(r)
    for (name, grader), rows in sorted(by.items()):
        rows.sort(key=lambda r: (CODE[r["label_a"]], CODE[r["label_b"]]))
        part = out.setdefault(name, [])
        part.extend(_row(name, "confusion", float(r["n"]), r["n"], None, grader, HUMAN_GOLD,
                         r["label_a"], r["label_b"]) for r in rows)
        total = sum(r["n"] for r in rows)
        agree = sum(r["n"] for r in rows if r["label_a"] == r["label_b"])
        part.append(_row(name, "grader_agreement", agree / total, total,
                         "share of items where the grader matches the adjudicated human label",
                         grader, HUMAN_GOLD))
    return out


def _evidence_confusion(cells: pa.Table) -> dict[str, list[dict]]:
    """The evidence locator's verdict × adjudicated human verdict counts, per stratum."""
    out: dict[str, list[dict]] = {}
    for r in cells.to_pylist():
        out.setdefault(r["stratum"], []).append(_row(
            r["stratum"], "evidence_confusion", float(r["n"]), r["n"],
            "evidence locator signal (label_a) vs adjudicated human label (label_b)",
            r["grader"], HUMAN_GOLD, r["label_a"], r["label_b"]))
    return out


def agreement(judgments: pa.Table, labels: pa.Table,
              evidence: pa.Table | None = None) -> pa.Table:
    """annotation_agreement of one partition from support_judgments and support_labels.

    Items are (claim, citation, atom). Counting is SQL (sql/support/); the statistics are
    computed from the counts, per stratum: overall first, then engines and domains. With
    ``support_evidence`` rows, the evidence locator's signals are compared with the
    adjudicated human labels of the same pairs (``evidence_confusion`` rows): a grader's
    confusion, never part of the gold.
    """
    con = duck.connect()
    con.register("j", judgments)
    con.register("l", labels)
    duck.create_table(con, "agreement_rows", "support/select_agreement_rows")
    alphas = _alphas(duck.query(con, "support/count_unit_votes",
                                {"labels": list(SUPPORT_LABELS)}))
    kappas = _kappas(duck.query(con, "support/count_annotator_pairs"))
    confusion = _confusion(duck.query(con, "support/count_grader_confusion"))
    located: dict[str, list[dict]] = {}
    if evidence is not None and evidence.num_rows:
        con.register("evidence", evidence.select(["claim_id", "citation_id", "verdict",
                                                  "grader"]))
        located = _evidence_confusion(duck.query(con, "support/count_evidence_confusion"))
    strata = [r[0] for r in con.sql("SELECT DISTINCT stratum FROM agreement_rows").fetchall()]
    strata = sorted(set(strata) | set(located))
    out: list[dict] = []
    for name in sorted(strata, key=lambda s: (s != "overall", s)):
        out.append(alphas.get(name) or _row(name, "krippendorff_alpha", None, 0,
                                            "undefined: no human judgment in this stratum"))
        out.extend(kappas.get(name, []))
        out.extend(confusion.get(name, []))
        out.extend(located.get(name, []))
    return pa.Table.from_pylist(out, schema=SCHEMA)
