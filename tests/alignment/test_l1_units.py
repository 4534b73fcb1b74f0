"""The L1 metric units: a soft-404 counts as dead (existence 0, dead 1, category
dead_soft_404); a wall is unresolved (no y, category unresolved_<wall>); a pass read from a
rendered capture counts as a pass (category pass_rendered); straight SQL on small tables."""

from __future__ import annotations

import pyarrow as pa

from citeaudit import duck

ROWS = [("c1", "pass", "ok", "static"), ("c2", "dead", "soft_404", "static"),
        ("c3", "dead", "http_404", "static"), ("c4", "unresolved", "paywall", "static"),
        ("c5", "unresolved", "no_capture_in_window", None),
        ("c6", "unresolved", "script_shell", "static"), ("c7", "pass", "ok", "rendered"),
        ("c8", "unresolved", "render_incomplete", "rendered")]


def _units(sql: str) -> dict[str, tuple]:
    con = duck.connect()
    con.register("citations", pa.table({"citation_id": [r[0] for r in ROWS],
                                        "answer_id": ["a"] * len(ROWS)}))
    con.register("answers", pa.table({
        "answer_id": ["a"], "query_id": ["q"], "engine": ["e"], "domain": ["news"],
        "risk_band": ["low"], "inclusion_prob": [1.0]}))
    con.register("citation_existence", pa.table({
        "citation_id": [r[0] for r in ROWS], "verdict": [r[1] for r in ROWS],
        "reason": [r[2] for r in ROWS],
        "capture_fidelity": pa.array([r[3] for r in ROWS], pa.string())}))
    return {r["unit_id"]: (r["y"], r["category"]) for r in duck.query(con, sql).to_pylist()}


def test_soft_404s_are_dead_and_walls_unresolved_in_the_units():
    dead = _units("metrics/select_dead_units")
    assert dead == {"c1": (0.0, "pass"), "c2": (1.0, "dead_soft_404"), "c3": (1.0, "dead"),
                    "c4": (None, "unresolved_paywall"), "c5": (None, "unresolved"),
                    "c6": (None, "unresolved_script_shell"), "c7": (0.0, "pass_rendered"),
                    "c8": (None, "unresolved")}
    exist = _units("metrics/select_existence_units")
    assert exist["c2"] == (0.0, "dead_soft_404") and exist["c4"] == (None, "unresolved_paywall")
    assert exist["c1"] == (1.0, "pass")
    # a rendered pass is a pass: the rate is unchanged, only the breakdown names it apart
    assert exist["c7"] == (1.0, "pass_rendered") and exist["c8"] == (None, "unresolved")
