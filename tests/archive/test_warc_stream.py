"""The streamed capture index: the same rows as the whole-table index, in bounded pieces.

The corpora WARCs (every damaged, ARC and odd file there) are indexed both ways and must give
identical tables; memory is checked without timing, through what the code holds: the
indexer's batches, the part files' and the output's row groups are bounded by a constant,
whatever the input's size.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.archive.index import (
    CAPTURE_SCHEMA,
    CAPTURES_TABLE_SCHEMA,
    index_file,
    index_file_into,
    index_paths,
    records,
    stream,
    streamed_index,
    with_origin,
)
from citeaudit.parquet_io import write_batches


def corpora_files(corpora: Path) -> list[tuple[Path, str]]:
    warc = corpora / "warc"
    found = sorted(p for p in warc.rglob("*") if p.is_file()
                   and any(s in p.name for s in (".warc", ".arc")))
    return [(p, p.relative_to(warc).as_posix()) for p in found]


def write_pages(path: Path, count: int, host: str = "example.com") -> Path:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i in range(count):
            body = f"<html>page {i}</html>".encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                    protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                f"http://{host}/p/{i}", "response", payload=io.BytesIO(body),
                length=len(body), http_headers=http,
                warc_headers_dict={"WARC-Date": "2024-05-06T07:08:09Z"}))
    return path


class ListSink:
    """Collects batches; a reset forgets them (and is counted)."""

    def __init__(self) -> None:
        self.batches: list[pa.RecordBatch] = []
        self.resets = 0

    def __call__(self, batch: pa.RecordBatch) -> None:
        self.batches.append(batch)

    def reset(self) -> None:
        self.batches.clear()
        self.resets += 1


def test_each_corpora_file_streamed_equals_index_file(corpora):
    restarted = 0
    for path, name in corpora_files(corpora):
        for reader in ("auto", "warcio", "fastwarc"):
            sink = ListSink()
            table, used, _note = index_file_into(path, name=name, reader=reader, sink=sink)
            assert table is None
            streamed = pa.Table.from_batches(sink.batches, CAPTURE_SCHEMA)
            whole = index_file(path, name=name, reader=reader).replace_schema_metadata(None)
            assert streamed.equals(whole), (name, reader)
            restarted += sink.resets
    assert restarted  # some files were refused by FastWARC part way and indexed again


@pytest.mark.parametrize("workers", [1, 2])
def test_streamed_index_equals_whole_table_index_on_the_corpora(corpora, tmp_path, workers):
    pairs = corpora_files(corpora)
    whole = index_paths(pairs, workers=workers, split_min_bytes=1)
    out = tmp_path / "captures.parquet"
    with streamed_index(pairs, workers=workers, split_min_bytes=1) as (batches, summary):
        write_batches(batches, CAPTURE_SCHEMA, out, row_group_rows=stream.ROW_GROUP_ROWS)
    streamed = pq.read_table(out)
    assert streamed.num_rows == whole.num_rows > 300
    assert streamed.equals(whole)  # row for row, same order, same types
    assert summary.rows == whole.num_rows
    assert summary.records_with_error == whole.num_rows - whole.column("error").null_count
    assert {"misaligned_gzip_member", "truncated_record"} <= set(summary.errors)
    rerun = tmp_path / "again.parquet"
    with streamed_index(pairs, workers=3 - workers, split_min_bytes=1) as (batches, _):
        write_batches(batches, CAPTURE_SCHEMA, rerun, row_group_rows=stream.ROW_GROUP_ROWS)
    assert rerun.read_bytes() == out.read_bytes()  # deterministic, whatever the workers


def test_indexer_hands_out_bounded_batches(tmp_path):
    path = write_pages(tmp_path / "big.warc.gz", 3 * records.BATCH_ROWS + 5)
    sink = ListSink()
    index_file_into(path, name="big", sink=sink)
    sizes = [b.num_rows for b in sink.batches]
    assert sum(sizes) == 3 * records.BATCH_ROWS + 5
    assert max(sizes) <= records.BATCH_ROWS and len(sizes) == 4


@pytest.mark.parametrize("workers", [1, 2])
def test_part_files_and_output_have_bounded_row_groups(tmp_path, monkeypatch, workers):
    batch_rows = 32
    monkeypatch.setattr(records, "BATCH_ROWS", batch_rows)  # before the workers fork
    monkeypatch.setattr(stream, "ROW_GROUP_ROWS", 64)
    small = write_pages(tmp_path / "small.warc.gz", 150)
    large = write_pages(tmp_path / "large.warc.gz", 3 * 150, host="example.org")
    pairs = [(large, "large.warc.gz"), (small, "small.warc.gz")]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "captures.parquet"
    with streamed_index(pairs, workers=workers, scratch=scratch) as (batches, summary):
        (folder,) = scratch.iterdir()
        part_batches = {part.name: [b.num_rows for b in stream._read_part(str(part))]
                        for part in folder.iterdir()}
        write_batches(batches, CAPTURE_SCHEMA, out, row_group_rows=stream.ROW_GROUP_ROWS)
    assert not list(scratch.iterdir())  # the parts are gone
    total = 4 * 150
    assert sorted(map(sum, part_batches.values())) == [150, 3 * 150]
    assert max(max(sizes) for sizes in part_batches.values()) == batch_rows  # 3x: same bound
    meta = pq.ParquetFile(out).metadata
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert groups == [64] * (total // 64) + ([total % 64] if total % 64 else [])
    table = pq.read_table(out)
    assert table.equals(index_paths(pairs, workers=1))
    assert summary.rows == total


def test_sorted_runs_are_merged_in_by_file_and_names_must_be_unique(tmp_path):
    pages = {name: write_pages(tmp_path / name, 3, host=name.split(".")[0] + ".com")
             for name in ("b.warc.gz", "d.warc.gz", "a.warc.gz", "c.warc.gz", "e.warc.gz")}
    supplied = [(pages[n], n) for n in ("b.warc.gz", "d.warc.gz")]
    fetched = with_origin(index_paths(
        [(pages[n], n) for n in ("a.warc.gz", "c.warc.gz", "e.warc.gz")], workers=1), "fetched")
    out = tmp_path / "captures.parquet"
    with streamed_index(supplied, workers=1, origin="supplied",
                        sorted_runs=[fetched.to_batches(max_chunksize=2)]) as (batches, _):
        write_batches(batches, CAPTURES_TABLE_SCHEMA, out, row_group_rows=4)
    table = pq.read_table(out)
    expected = pa.concat_tables([
        with_origin(index_paths(supplied, workers=1), "supplied"), fetched,
    ]).sort_by([("file", "ascending"), ("offset", "ascending")])
    assert table.schema.equals(CAPTURES_TABLE_SCHEMA)
    assert table.equals(expected)
    assert table.column("origin").to_pylist() == ["fetched"] * 3 + ["supplied"] * 3 + [
        "fetched"] * 3 + ["supplied"] * 3 + ["fetched"] * 3

    twice = [*supplied, (pages["a.warc.gz"], "b.warc.gz")]
    with pytest.raises(ValueError, match="same name"), streamed_index(twice, workers=1):
        pass
    clash = with_origin(index_paths([(pages["b.warc.gz"], "b.warc.gz")], workers=1), "fetched")
    clashing = streamed_index(supplied, workers=1, origin="supplied",
                              sorted_runs=[clash.to_batches()])
    with pytest.raises(ValueError, match="two inputs"), clashing as (batches, _):
        list(batches)


def test_a_file_refused_after_rows_were_written_is_rewritten_from_warcio(tmp_path):
    """FastWARC gives up at the end, after whole batches went to the part: none survive."""
    path = write_pages(tmp_path / "tail.warc.gz", records.BATCH_ROWS + 100)
    with open(path, "ab") as fh:
        fh.write(gzip.compress(b"this is not a WARC record\r\n" * 20))
    expected = index_file(path, name="tail")
    assert expected.schema.metadata[b"citeaudit.reader"] == b"warcio"
    sink = ListSink()
    index_file_into(path, name="tail", sink=sink)
    assert sink.resets == 1
    out = tmp_path / "c.parquet"
    with streamed_index([(path, "tail")], workers=1) as (batches, _):
        write_batches(batches, CAPTURE_SCHEMA, out, row_group_rows=500)
    table = pq.read_table(out)
    assert table.num_rows > records.BATCH_ROWS + 100  # the pages and rows for the junk
    assert table.equals(expected.replace_schema_metadata(None))


def test_cli_parquet_is_the_streamed_index(corpora, tmp_path, capsys):
    import argparse

    from citeaudit.archive.index import register_cli

    def cli(argv: list[str]) -> int:
        parser = argparse.ArgumentParser(prog="citeaudit")
        register_cli(parser.add_subparsers(dest="command", required=True))
        args = parser.parse_args(argv)
        return args.func(args)

    folder = corpora / "warc" / "resiliparse"
    out = tmp_path / "captures.parquet"
    assert cli(["index-warc", str(folder), "--out", str(out), "--workers", "2"]) == 0
    err = capsys.readouterr().err
    pairs = [(p, p.relative_to(folder).as_posix()) for p in sorted(folder.iterdir())
             if p.name.endswith((".warc", ".warc.gz"))]
    expected = index_paths(pairs, workers=1)
    assert pq.read_table(out).equals(expected)
    assert f"{expected.num_rows} rows from {len(pairs)} file(s)" in err
    assert "truncated_record in 1 file(s): clipped.warc.gz" in err
    one = str(folder / "clipped.warc.gz")
    assert cli(["index-warc", one, one, "--out", str(tmp_path / "x.parquet")]) == 2
    assert "same name" in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists()
