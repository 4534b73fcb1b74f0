"""The L1 metric units: a soft-404 counts as dead (existence 0, dead 1, category
dead_soft_404); a wall is unresolved (no y, category unresolved_<wall>); straight SQL on
small tables."""

from __future__ import annotations

import pyarrow as pa

from citeaudit import duck

ROWS = [("c1", "pass", "ok"), ("c2", "dead", "soft_404"), ("c3", "dead", "http_404"),
        ("c4", "unresolved", "paywall"), ("c5", "unresolved", "no_capture_in_window"),
        ("c6", "unresolved", "script_shell")]


def _units(sql: str) -> dict[str, tuple]:
    con = duck.connect()
    con.register("citations", pa.table({"citation_id": [r[0] for r in ROWS],
                                        "answer_id": ["a"] * len(ROWS)}))
    con.register("answers", pa.table({
        "answer_id": ["a"], "query_id": ["q"], "engine": ["e"], "domain": ["news"],
        "risk_band": ["low"], "inclusion_prob": [1.0]}))
    con.register("citation_existence", pa.table({
        "citation_id": [r[0] for r in ROWS], "verdict": [r[1] for r in ROWS],
        "reason": [r[2] for r in ROWS]}))
    return {r["unit_id"]: (r["y"], r["category"]) for r in duck.query(con, sql).to_pylist()}


def test_soft_404s_are_dead_and_walls_unresolved_in_the_units():
    dead = _units("metrics/select_dead_units")
    assert dead == {"c1": (0.0, "pass"), "c2": (1.0, "dead_soft_404"), "c3": (1.0, "dead"),
                    "c4": (None, "unresolved_paywall"), "c5": (None, "unresolved"),
                    "c6": (None, "unresolved_script_shell")}
    exist = _units("metrics/select_existence_units")
    assert exist["c2"] == (0.0, "dead_soft_404") and exist["c4"] == (None, "unresolved_paywall")
    assert exist["c1"] == (1.0, "pass")
