"""Work not done twice per codebook: a partition computed from the same inputs, settings and code
as another codebook's partition of the same date is copied from it (the same bytes); anything
that differs (an input file, a setting the step reads) computes anew. Real parquet files in a
derived folder, the functions the assets call; the shared demo run shows it end to end."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from assets._metadata import (
    REUSE_FILE,
    remember_key,
    reuse_key,
    reuse_other_codebook,
    write_table,
)
from citeaudit import codebook, parquet_io

DAY = {"observation_date": "2026-11-01"}
V1 = {**DAY, "codebook": "v1"}
V2 = {**DAY, "codebook": "v2"}
REUSED = ("citation_captures", "payload_texts", "citation_existence", "passage_checks",
          "support_evidence", "claim_independence")


def _compute(derived: Path, part: dict, settings: object) -> dict | None:
    """One step as the assets run it: reuse, else compute (here: a copy of the input with the
    setting in it) and remember the key."""
    key = reuse_key(derived, "step_out", {"step_in": DAY}, settings)
    meta = reuse_other_codebook(derived, "step_out", part, key)
    if meta is not None:
        return meta
    table = parquet_io.read_partition(derived, "step_in", DAY)
    table = table.append_column("setting", pa.array([repr(settings)] * table.num_rows))
    write_table(table, derived, "step_out", part)
    remember_key(derived, "step_out", part, key)
    return None


def _data(derived: Path, part: dict) -> bytes:
    return (parquet_io.partition_dir(derived, "step_out", part) / parquet_io.DATA_FILE
            ).read_bytes()


def test_the_same_inputs_and_settings_copy_the_other_codebooks_bytes(tmp_path: Path) -> None:
    parquet_io.write_partition(pa.table({"x": [1, 2, 3]}), tmp_path, "step_in", DAY)
    assert _compute(tmp_path, V1, {"threshold": 0.5}) is None  # nothing to reuse: computed
    meta = _compute(tmp_path, V2, {"threshold": 0.5})
    assert meta is not None and meta["reused_from"].value == "v1"
    assert meta["dagster/row_count"].value == 3
    assert _data(tmp_path, V2) == _data(tmp_path, V1)
    v2 = parquet_io.partition_dir(tmp_path, "step_out", V2)
    assert (v2 / REUSE_FILE).read_text() == (
        parquet_io.partition_dir(tmp_path, "step_out", V1) / REUSE_FILE).read_text()


@pytest.mark.parametrize("change", ["setting", "input"])
def test_a_changed_setting_or_input_computes_anew(tmp_path: Path, change: str) -> None:
    parquet_io.write_partition(pa.table({"x": [1, 2, 3]}), tmp_path, "step_in", DAY)
    _compute(tmp_path, V1, {"threshold": 0.5})
    _compute(tmp_path, V2, {"threshold": 0.5})  # reused
    if change == "input":
        parquet_io.write_partition(pa.table({"x": [1, 2, 4]}), tmp_path, "step_in", DAY)
        settings = {"threshold": 0.5}
    else:
        settings = {"threshold": 0.6}  # a backfill of v2 with a setting the step reads changed
    assert _compute(tmp_path, V2, settings) is None
    out = parquet_io.read_partition(tmp_path, "step_out", V2).to_pydict()
    assert out["setting"] == [repr(settings)] * 3
    assert out["x"] == ([1, 2, 4] if change == "input" else [1, 2, 3])


def test_a_recompute_removes_its_key_before_it_writes(tmp_path: Path) -> None:
    """Between the start of a recompute and its end no key names the partition's data (a
    killed step leaves no key beside data it did not compute), so nothing copies it."""
    parquet_io.write_partition(pa.table({"x": [1]}), tmp_path, "step_in", DAY)
    _compute(tmp_path, V1, "a")
    folder = parquet_io.partition_dir(tmp_path, "step_out", V1)
    key = reuse_key(tmp_path, "step_out", {"step_in": DAY}, "b")
    assert reuse_other_codebook(tmp_path, "step_out", V1, key) is None
    assert not (folder / REUSE_FILE).exists()
    # and v2 with v1's old settings finds no key to copy from: it computes
    assert _compute(tmp_path, V2, "a") is None


def test_dataclass_settings_key_by_their_fields(tmp_path: Path) -> None:
    parquet_io.write_partition(pa.table({"x": [1]}), tmp_path, "step_in", DAY)
    base = codebook.Evidence()
    same = reuse_key(tmp_path, "s", {"step_in": DAY}, {"evidence": codebook.Evidence()})
    assert same == reuse_key(tmp_path, "s", {"step_in": DAY}, {"evidence": base})
    changed = dataclasses.replace(base, window_sentences=base.window_sentences + 1)
    assert same != reuse_key(tmp_path, "s", {"step_in": DAY}, {"evidence": changed})


def test_demo_v2_partitions_are_v1s_bytes_where_the_codebooks_agree(demo_run) -> None:
    """The demo's two codebooks share the alignment window, tracking parameters, evidence and
    atomization settings: every step keyed on those reused v1's partition, byte for byte."""
    derived = demo_run.derived
    # the judged dates (a date with WARCs only has daily partitions, no judged ones)
    dates = sorted(p.parent.name.split("=", 1)[1]
                   for p in (derived / "citation_captures").glob("*=*/codebook=v2"))
    assert len(dates) >= 2
    for asset in REUSED:
        for date in dates:
            v1, v2 = (parquet_io.partition_dir(derived, asset, {**DAY, "observation_date": date,
                                                                "codebook": v})
                      for v in ("v1", "v2"))
            assert (v1 / REUSE_FILE).read_text() == (v2 / REUSE_FILE).read_text(), (asset, date)
            assert (v1 / parquet_io.DATA_FILE).read_bytes() == \
                (v2 / parquet_io.DATA_FILE).read_bytes(), (asset, date)
