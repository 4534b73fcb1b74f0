"""Inter-annotator agreement on support judgments (seed 000 §V-A, seed 002 §5.2).

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

import itertools
import math

import krippendorff
import numpy as np
import pyarrow as pa
from statsmodels.stats.inter_rater import cohens_kappa

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


def _alpha(stratum: str, human: list[dict]) -> dict:
    items = sorted({r["item"] for r in human})
    coders = sorted({r["annotator_id"] for r in human})
    per_item: dict[str, int] = {}
    for r in human:
        per_item[r["item"]] = per_item.get(r["item"], 0) + 1
    pairable = sum(1 for c in per_item.values() if c >= 2)
    if pairable == 0:
        return _row(stratum, "krippendorff_alpha", None, 0,
                    "undefined: no item has two or more human judgments")
    col = {it: j for j, it in enumerate(items)}
    row = {c: i for i, c in enumerate(coders)}
    data = np.full((len(coders), len(items)), np.nan)
    for r in human:
        data[row[r["annotator_id"]], col[r["item"]]] = CODE[r["label"]]
    if len({r["label"] for r in human}) < 2:
        return _row(stratum, "krippendorff_alpha", None, pairable,
                    "undefined: every human judgment has the same label")
    value = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal",
                               value_domain=list(range(len(SUPPORT_LABELS))))
    return _row(stratum, "krippendorff_alpha", float(value), pairable,
                "n = items with two or more human judgments")


def _kappas(stratum: str, human: list[dict]) -> list[dict]:
    by_coder: dict[str, dict[str, str]] = {}
    for r in human:
        by_coder.setdefault(r["annotator_id"], {})[r["item"]] = r["label"]
    out = []
    for a, b in itertools.combinations(sorted(by_coder), 2):
        shared = sorted(set(by_coder[a]) & set(by_coder[b]))
        if not shared:
            continue
        table = np.zeros((len(SUPPORT_LABELS), len(SUPPORT_LABELS)))
        for it in shared:
            table[CODE[by_coder[a][it]], CODE[by_coder[b][it]]] += 1
        used = sorted(set(np.nonzero(table.sum(0) + table.sum(1))[0]))
        sub = table[np.ix_(used, used)]
        if len(used) < 2:
            out.append(_row(stratum, "cohen_kappa", None, len(shared),
                            "undefined: both annotators used a single label", a, b))
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(cohens_kappa(sub, return_results=False))
        out.append(_row(stratum, "cohen_kappa", value, len(shared), None, a, b))
    return out


def _confusion(stratum: str, graders: list[dict], gold: dict[str, str]) -> list[dict]:
    out = []
    by_grader: dict[str, list[tuple[str, str]]] = {}
    for r in graders:
        if r["item"] in gold:
            by_grader.setdefault(r["grader"], []).append((r["label"], gold[r["item"]]))
    for grader, pairs in sorted(by_grader.items()):
        counts: dict[tuple[str, str], int] = {}
        for pair in pairs:
            counts[pair] = counts.get(pair, 0) + 1
        for (la, lb), c in sorted(counts.items(), key=lambda kv: (CODE[kv[0][0]],
                                                                  CODE[kv[0][1]])):
            out.append(_row(stratum, "confusion", float(c), c, None, grader, HUMAN_GOLD, la, lb))
        agree = sum(c for (la, lb), c in counts.items() if la == lb)
        out.append(_row(stratum, "grader_agreement", agree / len(pairs), len(pairs),
                        "share of items where the grader matches the adjudicated human label",
                        grader, HUMAN_GOLD))
    return out


def agreement(judgments: pa.Table, labels: pa.Table) -> pa.Table:
    """annotation_agreement of one partition from support_judgments and support_labels.

    Items are (claim, citation, atom). Gold for the grader comparison is the adjudicated human
    label of single-atom items that were not tied and not judged by a grader alone.
    """
    con = duck.connect()
    con.register("j", judgments)
    con.register("l", labels)
    rows = con.sql("""
        SELECT j.claim_id || '|' || coalesce(j.citation_id, '') || '|' || coalesce(j.atom_id, '')
                AS item,
            j.annotator_id, j.grader, j.is_human, j.label,
            coalesce(l.engine, 'unknown') AS engine, coalesce(l.domain, 'unknown') AS domain,
            l.label AS gold, l.tie, l.basis, l.n_atoms
        FROM j JOIN l ON l.claim_id = j.claim_id
            AND coalesce(l.citation_id, '') = coalesce(j.citation_id, '')
        ORDER BY item, j.annotator_id
    """).to_arrow_table().to_pylist()
    strata: dict[str, list[dict]] = {"overall": rows}
    for r in rows:
        strata.setdefault(f"engine={r['engine']}", []).append(r)
        strata.setdefault(f"domain={r['domain']}", []).append(r)
    out: list[dict] = []
    for name in sorted(strata, key=lambda s: (s != "overall", s)):
        part = strata[name]
        human = [r for r in part if r["is_human"]]
        graders = [r for r in part if not r["is_human"]]
        gold = {r["item"]: r["gold"] for r in human
                if not r["tie"] and r["basis"] == "human" and r["n_atoms"] == 1}
        out.append(_alpha(name, human))
        out.extend(_kappas(name, human))
        out.extend(_confusion(name, graders, gold))
    return pa.Table.from_pylist(out, schema=SCHEMA)
