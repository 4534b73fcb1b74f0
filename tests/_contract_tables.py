"""Small real parquet tables that follow the shared table contracts, for metrics/report tests.

The daily tables (answers, claims, citations, answer_checks, rejected_inputs) carry the columns
the ingest and citation stages write; the judged tables (citation_existence, support_labels,
passage_checks, metadata_checks, omission_endpoints, review_queue, annotation_agreement) carry
the minimum columns of the contracts in the project brief. Every value is chosen by the test,
so the expected counts are known.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from citeaudit import parquet_io

DATE = "2026-11-01"
VERSION = "v1"
INCLUSION = {"health": 1.0, "news": 0.25, "legal": 0.5}
BAND = {"health": "high", "news": "low", "legal": "low"}


def _write(derived: Path, name: str, rows: list[dict[str, Any]], schema: pa.Schema,
           date: str, version: str | None) -> None:
    part = {"observation_date": date}
    if version is not None:
        part["codebook"] = version
    table = pa.Table.from_pylist(rows, schema=schema)
    parquet_io.write_partition(table, derived, name, part)


def answer_rows(n: int = 24) -> list[dict[str, Any]]:
    """``n`` answers: engines alpha/beta alternate, domains health/news/legal in pairs."""
    rows = []
    for i in range(n):
        domain = ("health", "news", "legal")[(i // 2) % 3]
        rows.append({
            "answer_id": f"a{i:02d}", "query_id": f"q{i // 2:02d}",
            "engine": ("alpha", "beta")[i % 2], "domain": domain, "risk_band": BAND[domain],
            "inclusion_prob": INCLUSION[domain],
        })
    return rows


def write_daily(derived: Path, answers: list[dict[str, Any]], *, date: str = DATE,
                worthy: dict[str, bool | None] | None = None,
                uncited: set[str] = frozenset(), rejected: dict[str, str] | None = None,
                tokens: dict[str, int | None] | None = None, rejected_lines: int = 0,
                titles: dict[str, str] | None = None) -> None:
    """answers, claims, citations, answer_checks and rejected_inputs for one date.

    Each answer has one claim ``c<i>`` (verification-worthy unless ``worthy`` says otherwise)
    with one citation ``t<i>`` unless the answer is in ``uncited``. ``rejected`` maps answer
    ids to a fail-closed verification reason; ``tokens`` gives input+output tokens (None: no
    cost recorded).
    """
    worthy, rejected, tokens, titles = worthy or {}, rejected or {}, tokens or {}, titles or {}
    a_schema = pa.schema([("answer_id", pa.string()), ("query_id", pa.string()),
                          ("engine", pa.string()), ("domain", pa.string()),
                          ("risk_band", pa.string()), ("inclusion_prob", pa.float64()),
                          ("input_tokens", pa.int64()), ("output_tokens", pa.int64())])
    arows, crows, trows, krows = [], [], [], []
    for a in answers:
        aid = a["answer_id"]
        tok = tokens.get(aid, 1000)
        arows.append({**a, "input_tokens": tok, "output_tokens": None if tok is None else 0})
        cited = aid not in uncited
        crows.append({"answer_id": aid, "claim_id": "c" + aid[1:], "claim_index": 0,
                      "verification_worthy": worthy.get(aid, True), "n_citations": int(cited)})
        if cited:
            trows.append({"answer_id": aid, "claim_id": "c" + aid[1:],
                          "citation_id": "t" + aid[1:], "url": f"https://example.org/{aid}",
                          "title": titles.get(aid, f"Page {aid}")})
        reason = rejected.get(aid)
        krows.append({"answer_id": aid, "engine": a["engine"],
                      "verdict": "verified" if reason is None else "rejected",
                      "reason": reason, "served": reason is None, "input_tokens": tok,
                      "output_tokens": None if tok is None else 0})
    _write(derived, "answers", arows, a_schema, date, None)
    _write(derived, "claims", crows, pa.schema([
        ("answer_id", pa.string()), ("claim_id", pa.string()), ("claim_index", pa.int32()),
        ("verification_worthy", pa.bool_()), ("n_citations", pa.int32())]), date, None)
    _write(derived, "citations", trows, pa.schema([
        ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
        ("url", pa.string()), ("title", pa.string())]), date, None)
    _write(derived, "answer_checks", krows, pa.schema([
        ("answer_id", pa.string()), ("engine", pa.string()), ("verdict", pa.string()),
        ("reason", pa.string()), ("served", pa.bool_()), ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64())]), date, None)
    lines = [{"source": "answers", "source_file": f"answers/{date}/x.jsonl", "source_line": k + 1,
              "field": None if k == 0 else "answer_id", "reason": "missing_field",
              "detail": None, "raw": "{}"}
             for k in range(rejected_lines)]
    _write(derived, "rejected_inputs", lines, pa.schema([
        ("source", pa.string()), ("source_file", pa.string()), ("source_line", pa.int64()),
        ("field", pa.string()), ("reason", pa.string()), ("detail", pa.string()),
        ("raw", pa.string())]), date, None)


def write_existence(derived: Path, states: dict[str, str], *, date: str = DATE,
                    version: str = VERSION) -> None:
    """citation_existence: ``states`` maps answer id -> verdict of its citation."""
    rows = [{"answer_id": aid, "claim_id": "c" + aid[1:], "citation_id": "t" + aid[1:],
             "verdict": s, "reason": "http_404" if s == "dead" else None, "drift_seconds": 0.0,
             "capture_time": None if s == "unresolved" else f"{date}T06:00:00+00:00",
             "final_uri": None if s == "unresolved" else f"https://example.org/{aid}",
             "final_status": {"dead": 404, "unresolved": None}.get(s, 200),
             "payload_sha256": None if s == "unresolved" else "ab" * 32}
            for aid, s in states.items()]
    _write(derived, "citation_existence", rows, pa.schema([
        ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
        ("verdict", pa.string()), ("reason", pa.string()), ("drift_seconds", pa.float64()),
        ("capture_time", pa.string()), ("final_uri", pa.string()),
        ("final_status", pa.int32()), ("payload_sha256", pa.string())]),
        date, version)


def write_support(derived: Path, labels: dict[str, str], *, date: str = DATE,
                  version: str = VERSION, claim_level: dict[str, str] | None = None,
                  grader_only: frozenset[str] = frozenset()) -> None:
    """support_labels (+ review_queue, annotation_agreement): answer id -> label of its pair;
    ``claim_level`` adds claim-level rows (citation_id null) for some answers' claims."""
    rows = [{"answer_id": aid, "claim_id": "c" + aid[1:], "citation_id": "t" + aid[1:],
             "verdict": lab, "n_judgments": 2, "tie": lab == "unresolved",
             "queued": lab != "fully_supported",
             "basis": "grader_only" if aid in grader_only else "human"}
            for aid, lab in labels.items()]
    rows += [{"answer_id": aid, "claim_id": "c" + aid[1:], "citation_id": None, "verdict": lab,
              "n_judgments": 2, "tie": False, "queued": False, "basis": "human"}
             for aid, lab in (claim_level or {}).items()]
    _write(derived, "support_labels", rows, pa.schema([
        ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
        ("verdict", pa.string()), ("n_judgments", pa.int32()), ("tie", pa.bool_()),
        ("queued", pa.bool_()), ("basis", pa.string())]), date, version)
    queue = [{"answer_id": r["answer_id"], "claim_id": r["claim_id"],
              "citation_id": r["citation_id"], "reason": "tie" if r["tie"] else "not_full"}
             for r in rows if r["queued"]]
    _write(derived, "review_queue", queue, pa.schema([
        ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
        ("reason", pa.string())]), date, version)
    agreement = [
        {"stratum": "overall", "statistic": "krippendorff_alpha", "annotator_a": None,
         "annotator_b": None, "label_a": None, "label_b": None, "value": 0.71,
         "n": len(rows), "note": None},
        {"stratum": "engine=alpha", "statistic": "krippendorff_alpha", "annotator_a": None,
         "annotator_b": None, "label_a": None, "label_b": None, "value": None, "n": 0,
         "note": "undefined: no item has two or more human judgments"},
        {"stratum": "overall", "statistic": "cohen_kappa", "annotator_a": "ann-1",
         "annotator_b": "ann-2", "label_a": None, "label_b": None, "value": 0.64,
         "n": len(rows), "note": None},
        {"stratum": "overall", "statistic": "confusion", "annotator_a": "grader-x",
         "annotator_b": "adjudicated_human", "label_a": "fully_supported",
         "label_b": "unsupported", "value": 3.0, "n": 3, "note": None},
        {"stratum": "overall", "statistic": "grader_agreement", "annotator_a": "grader-x",
         "annotator_b": "adjudicated_human", "label_a": None, "label_b": None, "value": 0.8,
         "n": 15, "note": None},
    ]
    _write(derived, "annotation_agreement", agreement, pa.schema([
        ("stratum", pa.string()), ("statistic", pa.string()), ("annotator_a", pa.string()),
        ("annotator_b", pa.string()), ("label_a", pa.string()), ("label_b", pa.string()),
        ("value", pa.float64()), ("n", pa.int64()), ("note", pa.string())]),
        date, version)


def write_omission(derived: Path, endpoints: dict[str, tuple[int | None, str]], *,
                   date: str = DATE, version: str = VERSION,
                   urls: dict[str, str] | None = None) -> None:
    """omission_endpoints: answer id -> (r_o, policy_action)."""
    urls = urls or {}
    rows = [{"tuple_digest": f"tup-{aid}", "record_digest": f"rec-{aid}", "query_id": "q",
             "answer_id": aid, "claim_id": None,
             "source_url": urls.get(aid, f"https://example.org/{aid}"),
             "source_role": "affiliate", "I": 1, "A": 1, "M": 1 if r is not None else None,
             "D": 0, "r_o": r, "priority": 0.5, "policy_action": act}
            for aid, (r, act) in endpoints.items()]
    i8 = pa.int8()
    _write(derived, "omission_endpoints", rows, pa.schema([
        ("tuple_digest", pa.string()), ("record_digest", pa.string()), ("query_id", pa.string()),
        ("answer_id", pa.string()), ("claim_id", pa.string()), ("source_url", pa.string()),
        ("source_role", pa.string()), ("I", i8), ("A", i8), ("M", i8), ("D", i8),
        ("r_o", i8), ("priority", pa.float64()), ("policy_action", pa.string())]),
        date, version)


PAYLOAD = ('<script>window.__pwned = "script"</script>'
           '<img src=x onerror="window.__pwned = \'img\'">')


def write_codebook(raw: Path, version: str = VERSION, description: str | None = None) -> Path:
    """The demo codebook ``version`` under ``raw/codebooks``, with an optional description."""
    import yaml

    from citeaudit.demo_corpus import codebooks

    doc = codebooks.codebook(version)
    if description is not None:
        doc["description"] = description
    folder = raw / "codebooks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{version}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def planted_world(raw: Path, derived: Path, dates: tuple[str, ...] = (DATE, "2026-11-02"),
                  *, with_omission: bool = True) -> None:
    """Two dates of contract tables with XSS payloads planted in a cited page title, an
    omission source URL and the codebook description (every place the report shows data)."""
    write_codebook(raw, VERSION, "Planted codebook " + PAYLOAD)
    # engine gamma: two answers to one query (one cluster: rates without an interval) and no
    # source-risk tuple (its omission row is "no units")
    answers = answer_rows(24) + [{**a, "engine": "gamma", "query_id": "q99"}
                                 for a in answer_rows(26)[24:]]
    ids = [a["answer_id"] for a in answers]
    for k, date in enumerate(dates):
        write_daily(derived, answers, date=date, worthy={"a01": None}, uncited={"a03"},
                    rejected={"a05": "missing_citation"}, tokens={"a07": None},
                    rejected_lines=1, titles={"a02": "Title " + PAYLOAD, "a07": None})
        states = ("pass", "pass", "dead", "changed", "pass", "unresolved")
        write_existence(derived, {i: states[(j + k) % 6] for j, i in enumerate(ids)
                                  if i != "a03"}, date=date)
        labels = ("fully_supported", "fully_supported", "partially_supported", "unsupported",
                  "contradicted", "unresolved")
        write_support(derived, {i: labels[(j + k) % 6] for j, i in enumerate(ids)
                                if i != "a03"}, date=date)
        if with_omission:
            write_omission(derived, {i: ((1, "CONTEXTUALIZE"), (0, "PASS"), (None, "REVIEW"),
                                         (0, "PASS"))[j % 4] for j, i in enumerate(ids[:24])},
                           date=date, urls={"a00": "https://evil.example/" + PAYLOAD})
