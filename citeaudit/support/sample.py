"""The review sample: the pairs people should label, drawn by design so their labels stand for
the day.

``citeaudit sample --date D --n N [--by engine,domain,grader_label] [--allocation
proportional|neyman]`` takes the frame — every cited (claim, citation) pair the codebook's
primary grader labelled that day (``grader_judgments``) — cuts it into strata by the ``--by``
keys (``grader_label`` is the primary grader's verdict), allocates ``N`` over the strata
(proportional to their size, or Neyman: to size × the spread of the grader's labels, so the
strata where the grader is unsure get more), at least two per stratum (or the whole stratum
when smaller) so each stratum's variance can be estimated, and draws a simple random sample
without replacement in each: the first n_h pairs in the order of SHA-256(seed, pair), so the
draw is fixed by the seed and does not depend on row order. Each drawn pair carries its
inclusion probability n_h / N_h.

The sample is written to ``RAW/annotations/samples/<date>/<codebook>.csv`` (an input like the
annotations: it records a design decision people act on, so it is not recomputed by a run,
and drawing again over it needs ``--replace``). The Label Studio tasks of the sample carry
its id, stratum and inclusion probability; ``review import`` checks them against this file,
and the ``review_sample`` table joins the human labels back to it. Pairs labelled outside
the sample are kept there and shown, never used for the design-based estimates.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from pathlib import Path

import pyarrow as pa

from citeaudit import duck, storage

SAMPLES_DIR = Path("annotations") / "samples"
BY_KEYS = ("engine", "domain", "grader_label")
ALLOCATIONS = ("proportional", "neyman")
MIN_PER_STRATUM = 2
NEYMAN_FLOOR = 0.1  # spread assumed where the grader is unanimous: people may still differ
DEFAULT_SEED = 20261101
COLUMNS = ("sample_id", "observation_date", "codebook", "claim_id", "citation_id",
           "answer_id", "engine", "domain", "grader", "grader_label", "stratum",
           "stratum_size", "stratum_sample", "inclusion_prob", "by", "allocation", "seed")
SAMPLE_SCHEMA = pa.schema([(c, pa.int64() if c in ("stratum_size", "stratum_sample", "seed")
                            else pa.float64() if c == "inclusion_prob" else pa.string())
                           for c in COLUMNS])


class SampleError(ValueError):
    """A sample that cannot be drawn or read; the message says why and what to do."""


def sample_path(raw: Path, date: str, version: str) -> Path:
    """Where the review sample of ``date`` × ``version`` lives in the raw folder."""
    return storage.path(raw) / SAMPLES_DIR / date / f"{version}.csv"


def parse_by(text: str) -> tuple[str, ...]:
    """``engine,domain`` → ("engine", "domain"); an unknown key is an error naming the keys."""
    keys = tuple(k.strip() for k in text.split(",") if k.strip()) if text else ()
    bad = [k for k in keys if k not in BY_KEYS]
    if bad:
        raise SampleError(f"--by {text}: {', '.join(bad)} is not a stratification key "
                          f"(use any of {', '.join(BY_KEYS)})")
    if len(set(keys)) != len(keys):
        raise SampleError(f"--by {text}: a key is repeated")
    return keys


def stratum_of(row: dict, by: tuple[str, ...]) -> str:
    """The stratum label of a frame row: its ``by`` values joined (``all`` without keys)."""
    if not by:
        return "all"
    return "|".join(f"{k}={row.get(k) if k != 'grader_label' else row.get('verdict')}"
                    for k in by)


def by_of_stratum(stratum: str) -> tuple[str, ...]:
    """The ``by`` keys a stratum label was made with (``engine=a|domain=b`` → engine, domain)."""
    if stratum == "all":
        return ()
    return parse_by(",".join(part.split("=", 1)[0] for part in stratum.split("|")))


def frame(grader_judgments: pa.Table, grader: str) -> pa.Table:
    """The sampling frame: one row per pair the grader labelled (``select_sample_frame.sql``)."""
    con = duck.connect()
    try:
        con.register("grader_judgments", grader_judgments)
        return duck.query(con, "support/select_sample_frame", {"grader": grader})
    finally:
        con.close()


def allocate(sizes: dict[str, int], spreads: dict[str, float], n: int,
             allocation: str) -> dict[str, int]:
    """n_h per stratum: at least ``MIN_PER_STRATUM`` (or N_h), at most N_h, the rest in
    proportion to N_h (or N_h × S_h for Neyman), one unit at a time by Sainte-Laguë divisors."""
    if allocation not in ALLOCATIONS:
        raise SampleError(f"--allocation {allocation}: use one of {', '.join(ALLOCATIONS)}")
    total = sum(sizes.values())
    if n > total:
        raise SampleError(f"--n {n} is more than the {total} pairs of the frame")
    floor = {h: min(MIN_PER_STRATUM, s) for h, s in sizes.items()}
    if n < sum(floor.values()):
        raise SampleError(
            f"--n {n} is below {MIN_PER_STRATUM} per stratum ({len(sizes)} strata need "
            f"{sum(floor.values())}): raise --n or stratify by fewer --by keys")
    weight = {h: sizes[h] * (spreads[h] if allocation == "neyman" else 1.0) for h in sizes}
    take = dict(floor)
    for _ in range(n - sum(take.values())):
        # the next unit to the open stratum furthest below its share (Sainte-Laguë divisors)
        h = max((g for g in sizes if take[g] < sizes[g]),
                key=lambda g: (weight[g] / (take[g] + 0.5), g))
        take[h] += 1
    return take


def draw(frame_rows: pa.Table, n: int, by: tuple[str, ...], allocation: str, seed: int,
         date: str, version: str, grader: str) -> pa.Table:
    """The sample (``SAMPLE_SCHEMA``) of ``n`` pairs of the frame, stratified by ``by``."""
    rows = frame_rows.to_pylist()
    if not rows:
        raise SampleError(f"no graded pair for {date} × codebook {version}: run the pipeline "
                          "first (citeaudit run), the frame is grader_judgments")
    strata: dict[str, list[dict]] = {}
    for r in rows:
        strata.setdefault(stratum_of(r, by), []).append(r)
    sizes = {h: len(v) for h, v in strata.items()}
    spreads = {}
    for h, v in strata.items():
        p = sum(r["verdict"] == "fully_supported" for r in v) / len(v)
        spreads[h] = max(math.sqrt(p * (1 - p)), NEYMAN_FLOOR)
    take = allocate(sizes, spreads, n, allocation)
    by_text = ",".join(by)
    sample_id = hashlib.sha256(f"{date}|{version}|{grader}|{by_text}|{allocation}|{n}|{seed}"
                               .encode()).hexdigest()[:16]
    out = []
    for h in sorted(strata):
        ranked = sorted(strata[h], key=lambda r: hashlib.sha256(
            f"{seed}:{r['claim_id']}/{r['citation_id']}".encode()).hexdigest())
        for r in ranked[:take[h]]:
            out.append({
                "sample_id": sample_id, "observation_date": date, "codebook": version,
                "claim_id": r["claim_id"], "citation_id": r["citation_id"],
                "answer_id": r["answer_id"], "engine": r["engine"], "domain": r["domain"],
                "grader": grader, "grader_label": r["verdict"], "stratum": h,
                "stratum_size": sizes[h], "stratum_sample": take[h],
                "inclusion_prob": take[h] / sizes[h], "by": by_text,
                "allocation": allocation, "seed": seed})
    out.sort(key=lambda r: (r["claim_id"], r["citation_id"]))
    return pa.Table.from_pylist(out, schema=SAMPLE_SCHEMA)


def write(sample: pa.Table, path: Path) -> None:
    """The sample as CSV (one header, rows in pair order), written atomically."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in sample.to_pylist():
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in r.items()})
    storage.write_bytes_atomic(path, buf.getvalue().encode("utf-8"))


def read(path: Path) -> pa.Table:
    """A sample file back as ``SAMPLE_SCHEMA``; a malformed file is an error naming the line."""
    path = storage.path(path)
    rows = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise SampleError(f"{path}: line 1: missing column(s) {', '.join(missing)}; draw "
                              "the sample again with citeaudit sample --replace")
        for line, r in enumerate(reader, start=2):
            try:
                rows.append({c: (int(r[c]) if SAMPLE_SCHEMA.field(c).type == pa.int64() else
                                 float(r[c]) if c == "inclusion_prob" else r[c])
                             for c in COLUMNS})
            except ValueError as exc:
                raise SampleError(f"{path}: line {line}: {exc}") from None
            p = rows[-1]["inclusion_prob"]
            if not 0 < p <= 1:
                raise SampleError(f"{path}: line {line}: inclusion_prob {p!r} is not in (0, 1]")
    return pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)


def read_optional(raw: Path, date: str, version: str) -> pa.Table | None:
    """The sample of a date × codebook, or None when none was drawn."""
    path = sample_path(raw, date, version)
    return read(path) if path.is_file() else None


def review_sample(sample: pa.Table | None, labels: pa.Table, graded: pa.Table,
                  grader: str) -> pa.Table:
    """The ``review_sample`` table (``select_review_sample.sql``): the drawn pairs with their
    design and labels, and the pairs labelled outside the sample."""
    con = duck.connect()
    try:
        con.register("sample", sample if sample is not None else SAMPLE_SCHEMA.empty_table())
        con.register("labels", labels.select(["claim_id", "citation_id", "answer_id", "engine",
                                              "domain", "verdict", "basis"]))
        con.register("graded", graded.select(["claim_id", "citation_id", "grader", "verdict"]))
        return duck.query(con, "support/select_review_sample", {"grader": grader})
    finally:
        con.close()


HUMAN_Y = {"fully_supported": 1.0, "partially_supported": 0.0, "unsupported": 0.0,
           "contradicted": 0.0}
JUDGED = ("labelled", "label_unresolved")  # review_sample statuses people have acted on


def ppi_rates(review: pa.Table, graded: pa.Table, grader: str) -> list[dict]:
    """The full-support rate of the sample's frame, human-only and prediction-powered
    (:func:`citeaudit.stats.ppi.stratified_ppi`), overall and per engine or domain when the
    sample is stratified by it (a margin's strata nest in it, so the design holds there too).

    The target is the full-support rate among the pairs people can resolve, a ratio
    estimator (:func:`citeaudit.stats.ppi.combine`): per judged pair y (fully_supported 1;
    partial, unsupported, contradicted 0) and d (resolved 1; judged ``unresolved`` — page
    unavailable, unclear — 0, outside the rate's denominator, never a 0 of the rate). Drawn
    pairs not judged yet (``awaiting_label``) are missing, assumed missing at random within
    their stratum. f: the grader says fully_supported (1) or anything else (0); g: the grader
    could label the pair (not ``unresolved``). One dict per row, keyed by ``margin``,
    ``engine``, ``domain``; ``reason`` says when there is no estimate; ``unresolved`` counts
    the judged pairs people left unresolved, ``missing`` the drawn pairs not judged yet."""
    from citeaudit.stats.ppi import stratified_ppi

    every = review.to_pylist()
    drawn = [r for r in every if r["in_sample"]]
    outside = sum(1 for r in every if not r["in_sample"])
    base = {"grader": grader, "outside": outside}
    if not drawn:
        return [{**base, "margin": "overall", "engine": "all", "domain": "all",
                 "result": None, "reason": "no_sample",
                 "note": "no review sample drawn for this date × codebook (citeaudit sample)"}]
    by = by_of_stratum(drawn[0]["stratum"])
    rows = frame(graded, drawn[0]["grader"]).to_pylist()
    sizes: dict[str, int] = {}
    for r in rows:
        r["stratum"] = stratum_of(r, by)
        sizes[r["stratum"]] = sizes.get(r["stratum"], 0) + 1
    expected = {r["stratum"]: r["stratum_size"] for r in drawn}
    if not rows:
        return [{**base, "margin": "overall", "engine": "all", "domain": "all", "result": None,
                 "reason": "grader_missing",
                 "note": f"no label of grader {drawn[0]['grader']!r} in this run, whose labels "
                         "the sample was drawn with (the llm judge runs only when "
                         "CITEAUDIT_JUDGE_BASE_URL is set)"}]
    if sizes != expected:
        return [{**base, "margin": "overall", "engine": "all", "domain": "all", "result": None,
                 "reason": "frame_changed",
                 "note": "the graded pairs no longer match the frame the sample was drawn "
                         "from (a rerun of the grader changed labels or pairs): draw the "
                         "sample again (citeaudit sample --replace)"}]
    every_value = {k: sorted({r[k] for r in rows}) for k in ("engine", "domain")}
    margins = [("overall", None)] + [(k, k) for k in ("engine", "domain") if k in by]
    out = []
    for margin, key in margins:
        values = every_value[key] if key else ["all"]  # a margin left empty says so
        for value in values:
            fr = [r for r in rows if key is None or r[key] == value]
            lab = [r for r in drawn if r["status"] in JUDGED
                   and (key is None or r[key] == value)]
            res = stratified_ppi(
                [HUMAN_Y[r["human_verdict"]] if r["status"] == "labelled" else 0.0
                 for r in lab],
                [1.0 if r["grader_verdict"] == "fully_supported" else 0.0 for r in lab],
                [r["stratum"] for r in lab], [r["stratum"] for r in fr],
                [1.0 if r["verdict"] == "fully_supported" else 0.0 for r in fr],
                d=[1.0 if r["status"] == "labelled" else 0.0 for r in lab],
                g=[0.0 if r["grader_verdict"] == "unresolved" else 1.0 for r in lab],
                frame_g=[0.0 if r["verdict"] == "unresolved" else 1.0 for r in fr])
            missing = sum(1 for r in drawn if r["status"] not in JUDGED
                          and (key is None or r[key] == value))
            outside_here = sum(1 for r in every if not r["in_sample"]
                               and (key is None or r[key] == value))
            out.append({**base, "outside": outside_here, "margin": margin,
                        "engine": value if margin == "engine" else "all",
                        "domain": value if margin == "domain" else "all",
                        "result": res, "reason": res.reason, "missing": missing,
                        "unresolved": res.n_unresolved, "note": res.note})
    return out
