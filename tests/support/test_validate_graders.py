"""``validate-grader`` for any grader: balanced accuracy, Cohen's kappa and the confusion matrix
with bootstrap intervals, against the project's own adjudicated labels (held-out half)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from citeaudit import cli
from citeaudit.support import cli as support_cli
from citeaudit.support import validate


def test_kappa_matches_sklearn() -> None:
    rng = np.random.default_rng(1)
    labels = np.array(["fully_supported", "unsupported", "partially_supported"])
    human = labels[rng.integers(0, 3, 200)]
    grader = np.where(rng.random(200) < 0.7, human, labels[rng.integers(0, 3, 200)])
    table = np.array([[np.sum((human == a) & (grader == b)) for b in labels] for a in labels])
    assert validate.kappa(human, grader) == pytest.approx(
        cohens_kappa(table, return_results=False))


def test_label_agreement_figures() -> None:
    rows = ([{"human": "fully_supported", "grader": "fully_supported", "question": f"q{i}"}
             for i in range(30)] +
            [{"human": "unsupported", "grader": "fully_supported", "question": f"r{i}"}
             for i in range(10)] +
            [{"human": "unsupported", "grader": "unsupported", "question": f"s{i}"}
             for i in range(10)])
    out = validate.label_agreement(rows)
    ba, lo, hi = out["balanced_accuracy"]
    assert ba == pytest.approx((1.0 + 0.5) / 2) and lo <= ba <= hi
    assert out["human=unsupported grader=fully_supported (n=10)"][0] == pytest.approx(0.5)
    assert out["n"] == (50,)


def test_validate_grader_project(demo_run, capsys) -> None:
    assert cli.main(["validate-grader", "project", str(demo_run.derived), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["grader"] == "locator" and 0 < rep["held_out"] < rep["pairs"]
    overall = rep["labels"]["overall"]
    assert overall["n"] == [rep["held_out"]]
    assert any(k.startswith("engine=") for k in rep["labels"])
    assert any(k.startswith("human=") for k in overall)
    support_cli.print_labels("t", rep["labels"])
    assert "confusion (overall" in capsys.readouterr().out
    assert cli.main(["validate-grader", "project", str(demo_run.derived / "nope")]) == 2
    assert "run the pipeline first" in capsys.readouterr().out
