"""Benchmark the capture index against cdxj-indexer on one realistic ~150 MB WARC.

Run: ``.venv/bin/python benchmarks/bench_index.py`` (``make bench``). Options: ``--repeat N``
(best of N per measurement), ``--records N`` (size of the generated WARC), ``--ladder N``
(only the per-part cost ladder of the one-process index, N interleaved rounds: see ``LADDER``).

The WARC is generated once with warcio's writer (deterministic, seeded) and cached under
``benchmarks/.cache/``: ~21,000 records, gzip per record, mostly HTML pages of 5-30 KB, with
revisits, 301/302 redirects, 404/410/500s, and the same content split into 4 part files
(their concatenation is the single file); a file of the single file three times over is the
"3x" input. Each measurement runs in its own Python subprocess, which reports its wall time
for the work (imports excluded) and its peak RSS (its own high-water mark since it was
exec'd, ``peak_rss.own_peak_mb``, so nothing of this parent is counted; plus its largest
worker process where there are workers, ``getrusage`` of the forked workers):

a. cdxj-indexer (its Python API, default options, output to /dev/null)
b. a bare warcio loop: iterate, parse HTTP headers, sha256 every payload
c. ``index_file(reader="warcio")`` (a whole table in memory)
d. ``index_file(reader="fastwarc")`` (a whole table in memory)
s. the streamed index, one process: ``streamed_index(workers=1)`` into a parquet file (what
   ``citeaudit index-warc --out x.parquet --workers 1`` and the ``captures`` asset do)
s3. (s) on the 3x file (peak RSS must not grow with the input)
e. the streamed index over the 4 part files, 2 workers (each part is over the 32 MiB split
   threshold, so it is also cut in two byte ranges)
f. d + ``to_cdxj_lines`` (what ``citeaudit index-warc`` does for CDXJ output)
g. the streamed index on the single file, 2 workers (split into 2 byte ranges)
w. whole processes, imports included: ``citeaudit index-warc W --out x.parquet --workers 1``
   against the ``cdxj-indexer W -o /dev/null`` command (run from the same child, one after
   the other; wall, CPU and peak RSS of each process from ``os.wait4``, each started from a
   fresh small interpreter, ``peak_rss.run``)
w3. (w) on the 3x file (the whole process's peak RSS must not grow with the input either)

and, for context, a bare FastWARC iterate-and-sha256 loop and ``surt.surt`` alone over every
target URI (the SURT key every indexer here computes; it is a fixed share of a-g).

It also checks that (c), (d), (s) and (g) give identical rows, (e) the same captures, (s3)
three times the rows, and that our CDXJ equals cdxj-indexer's (sorted) line for line, and
prints a Markdown table for benchmarks/README.md with the two targets as ratios measured in
this one run: (s) against (a) in records/s, and the peak RSS of (s3) against (s).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import peak_rss

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
SEED = 20240601
PARTS = 4
GENERATOR_VERSION = 3  # bump to regenerate the cached WARC


# ---------------------------------------------------------------------------------------------
# data generation
# ---------------------------------------------------------------------------------------------


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    words = set()
    while len(words) < size:
        n = rng.choice((2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 11))
        words.add("".join(rng.choices(letters, weights, k=n)))
    return sorted(words)


def _paragraphs(rng: random.Random, count: int) -> list[str]:
    vocab = _vocabulary(rng, 12000)
    zipf = [1.0 / (i + 1) ** 0.8 for i in range(len(vocab))]
    out = []
    for _ in range(count):
        words = rng.choices(vocab, zipf, k=rng.randint(30, 160))
        text = " ".join(words).capitalize() + "."
        tag = rng.choice(("p", "p", "p", "li", "h2", "blockquote"))
        out.append(f"<{tag}>{text}</{tag}>\n")
    return out


def _html(rng: random.Random, paras: list[str], url: str, size: int) -> bytes:
    head = (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{url.rsplit('/', 1)[-1] or 'index'}</title>\n"
        "<link rel=\"stylesheet\" href=\"/static/site.css\">\n</head>\n<body>\n<nav>\n"
    )
    nav = "".join(
        f"<a href=\"/section/{rng.randint(1, 400)}/page-{rng.randint(1, 5000)}.html\">"
        f"Item {i}</a>\n"
        for i in range(rng.randint(5, 25))
    )
    parts = [head, nav, "</nav>\n<main>\n"]
    total = sum(map(len, parts))
    while total < size:
        para = rng.choice(paras)
        parts.append(para)
        total += len(para)
    parts.append("</main>\n<footer>Generated for the citeaudit benchmark.</footer>\n")
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")


def generate(records: int) -> tuple[Path, list[Path]]:
    """Write (or reuse) the benchmark WARC and its part files; return their paths."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    CACHE.mkdir(exist_ok=True)
    tag = f"v{GENERATOR_VERSION}-{records}"
    whole = CACHE / f"bench-{tag}.warc.gz"
    parts = [CACHE / f"bench-{tag}-part{i}.warc.gz" for i in range(PARTS)]
    if whole.exists() and all(p.exists() for p in parts):
        return whole, parts

    print(f"generating {whole.name} ({records} records) ...", file=sys.stderr, flush=True)
    rng = random.Random(SEED)
    paras = _paragraphs(rng, 4000)
    hosts = [f"www.{w}{rng.choice(('news', 'journal', 'wiki', 'blog', 'lab'))}."
             f"{rng.choice(('com', 'org', 'net', 'edu', 'de', 'co.uk'))}"
             for w in _vocabulary(rng, 600)]
    start = datetime(2024, 3, 1, tzinfo=UTC)
    seen: list[tuple[str, str, str]] = []  # url, date, payload digest of 200 responses
    per_part = records // PARTS
    n = 0
    for index, part in enumerate(parts):
        with open(part, "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            writer.write_record(writer.create_warcinfo_record(
                part.name, {"software": "citeaudit bench_index.py", "format": "WARC 1.0"}))
            n += 1
            target = records if index == PARTS - 1 else per_part * (index + 1)
            while n < target:
                n += 1
                when = start + timedelta(seconds=n * 7 + rng.randint(0, 6))
                date = when.strftime("%Y-%m-%dT%H:%M:%SZ")
                host = rng.choice(hosts)
                path = "/".join(rng.choice(("news", "article", "docs", "2024", "papers", "topic"))
                                for _ in range(rng.randint(1, 3)))
                url = f"https://{host}/{path}/{rng.randint(1, 10**6)}.html"
                if rng.random() < 0.1:
                    url += f"?ref={rng.randint(1, 99)}&utm_source=x"
                roll = rng.random()
                headers = {"WARC-Date": date}
                if roll < 0.07 and seen:
                    ref_url, ref_date, digest = rng.choice(seen[-2000:])
                    status = "revisit"
                    http = StatusAndHeaders("200 OK", [
                        ("Content-Type", "text/html; charset=utf-8"),
                        ("Date", when.strftime("%a, %d %b %Y %H:%M:%S GMT")),
                        ("Server", "nginx")], protocol="HTTP/1.1")
                    same = rng.random() < 0.7
                    record = writer.create_revisit_record(
                        ref_url if same else url, digest, ref_url, ref_date,
                        http_headers=http, warc_headers_dict=headers)
                else:
                    if roll < 0.11:
                        status, body = rng.choice(("301 Moved Permanently", "302 Found")), b""
                        extra = [("Location", f"https://{host}/moved/{rng.randint(1, 10**6)}")]
                    elif roll < 0.14:
                        status, extra = "404 Not Found", []
                        body = _html(rng, paras, url, rng.randint(800, 3000))
                    elif roll < 0.15:
                        status, extra = "410 Gone", []
                        body = _html(rng, paras, url, 600)
                    elif roll < 0.16:
                        status, extra = "500 Internal Server Error", []
                        body = _html(rng, paras, url, 400)
                    else:
                        status, extra = "200 OK", []
                        body = _html(rng, paras, url, int(5000 + 25000 * rng.random() ** 1.3))
                    http = StatusAndHeaders(status, [
                        ("Content-Type", "text/html; charset=utf-8"),
                        ("Content-Length", str(len(body))),
                        ("Date", when.strftime("%a, %d %b %Y %H:%M:%S GMT")),
                        ("Server", "nginx"), ("Cache-Control", "max-age=600"),
                        *extra], protocol="HTTP/1.1")
                    record = writer.create_warc_record(
                        url, "response", payload=io.BytesIO(body), http_headers=http,
                        warc_headers_dict=headers)
                writer.write_record(record)
                if record.rec_type == "response" and status.startswith("200"):
                    digest = record.rec_headers.get_header("WARC-Payload-Digest")
                    seen.append((url, date, digest))
    with open(whole, "wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    return whole, parts


def tripled(whole: Path) -> Path:
    """The benchmark WARC three times over, in one file (written once, cached)."""
    path = whole.with_name(whole.name.replace(".warc.gz", "-x3.warc.gz"))
    if not path.exists():
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as out:
            for _ in range(3):
                with open(whole, "rb") as src:
                    while block := src.read(1 << 22):
                        out.write(block)
        tmp.replace(path)
    return path


# ---------------------------------------------------------------------------------------------
# measurements (each runs in a child process)
# ---------------------------------------------------------------------------------------------


def _count_records(path: Path) -> int:
    from fastwarc.warc import ArchiveIterator

    with open(path, "rb") as fh:
        return sum(1 for _ in ArchiveIterator(fh, parse_http=False))


def _peak_rss_mb() -> tuple[float, float]:
    """Peak RSS so far of this process (its own, since it was exec'd) and of its largest
    (finished) child, in MB. The workers are forked from this process, so their figure counts
    the pages they share with it."""
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak_rss.own_peak_mb(), child_kb / 1024


def _command(cmd: list[str]) -> tuple[float, float, float]:
    """Run a command to the end: (wall s, CPU s, peak RSS MB) of that process alone, started
    from a fresh small interpreter (``peak_rss.run``), so no peak of this one is inherited."""
    with tempfile.TemporaryFile() as log:
        done = peak_rss.run(cmd, stdout=log, stderr=log)
        if done.returncode:
            log.seek(0)
            raise SystemExit(f"{cmd[0]} failed:\n{log.read().decode(errors='replace')}")
    return done.wall_s, done.cpu_s, done.peak_mb


def _measure(kind: str, whole: str, parts: list[str], out: str) -> dict:
    """Run one measurement in this (child) process; return its result dict.

    Peak RSS is taken right after the timed work, before the outputs used for the
    cross-checks are written.
    """
    table = lines = None
    if kind == "cdxj-indexer":
        from cdxj_indexer.main import write_cdx_index

        t0, c0 = time.perf_counter(), time.process_time()
        write_cdx_index(out, [whole], {})
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    elif kind == "warcio-hash-loop":
        from warcio.archiveiterator import ArchiveIterator

        t0, c0 = time.perf_counter(), time.process_time()
        with open(whole, "rb") as fh:
            for record in ArchiveIterator(fh):
                digest = hashlib.sha256()
                read = record.raw_stream.read
                while chunk := read(65536):
                    digest.update(chunk)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    elif kind == "fastwarc-hash-loop":
        from fastwarc.warc import ArchiveIterator as FastIterator

        t0, c0 = time.perf_counter(), time.process_time()
        with open(whole, "rb") as fh:
            for record in FastIterator(fh, parse_http=False):
                digest = hashlib.sha256()
                read = record.reader.read
                while chunk := read(65536):
                    digest.update(chunk)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    elif kind == "surt-only":
        import surt
        from fastwarc.warc import ArchiveIterator as FastIterator

        with open(whole, "rb") as fh:
            urls = [r.headers.get("WARC-Target-URI") for r in FastIterator(fh, parse_http=False)]
        urls = [u for u in urls if u]
        t0, c0 = time.perf_counter(), time.process_time()
        for url in urls:
            surt.surt(url)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    elif kind in ("index_file-warcio", "index_file-fastwarc", "index_file+cdxj"):
        from citeaudit.archive.index import index_file, to_cdxj_lines

        reader = "warcio" if kind == "index_file-warcio" else "fastwarc"
        t0, c0 = time.perf_counter(), time.process_time()
        table = index_file(whole, name=Path(whole).name, reader=reader)
        lines = list(to_cdxj_lines(table)) if kind == "index_file+cdxj" else None
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        used = (table.schema.metadata or {}).get(b"citeaudit.reader", b"").decode()
        if used != reader:
            raise SystemExit(f"{kind}: reader {reader} not used ({used})")
    elif kind in ("stream-1proc", "stream-1proc-x3", "stream-parts-2workers",
                  "stream-single-2workers"):
        from citeaudit.archive.index import CAPTURE_SCHEMA, ROW_GROUP_ROWS, streamed_index
        from citeaudit.parquet_io import write_batches

        if kind == "stream-parts-2workers":
            inputs, workers = parts, 2
        else:
            source = tripled(Path(whole)) if kind.endswith("x3") else Path(whole)
            inputs, workers = [str(source)], 1 if "1proc" in kind else 2
        t0, c0 = time.perf_counter(), time.process_time()
        with streamed_index([(Path(p), Path(p).name) for p in inputs], workers=workers) as (
            batches, _summary
        ):
            write_batches(batches, CAPTURE_SCHEMA, Path(out + ".parquet"),
                          row_group_rows=ROW_GROUP_ROWS)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    elif kind in ("whole-processes", "whole-processes-x3"):
        bindir = Path(sys.executable).parent
        source = str(tripled(Path(whole))) if kind.endswith("x3") else whole
        theirs, theirs_cpu, theirs_rss = _command(
            [str(bindir / "cdxj-indexer"), source, "-o", os.devnull])
        ours, ours_cpu, ours_rss = _command(
            [str(bindir / "citeaudit"), "index-warc", source, "--out", out + ".parquet",
             "--workers", "1"])
        return {"kind": kind, "seconds": ours, "cpu_seconds": ours_cpu, "rss_mb": ours_rss,
                "theirs": theirs, "theirs_cpu": theirs_cpu, "theirs_rss_mb": theirs_rss,
                "child_rss_mb": 0.0}
    elif kind.startswith("ladder-"):
        elapsed, cpu = _ladder_step(kind, whole)
    else:
        raise SystemExit(f"unknown measurement {kind}")
    rss, child_rss = _peak_rss_mb()
    if table is not None:
        import pyarrow.parquet as pq

        pq.write_table(table, out + ".parquet")
    elif kind.startswith("stream"):
        pass  # written by the measurement itself
    if lines is not None:
        Path(out).write_text("".join(line + "\n" for line in lines))
    if "2workers" in kind:
        cpu = None  # the work is in the worker processes
    return {"kind": kind, "seconds": elapsed, "cpu_seconds": cpu, "rss_mb": rss,
            "child_rss_mb": child_rss}


LADDER = [
    ("ladder-inflate", "FastWARC iteration alone (inflate every member, no reads)"),
    ("ladder-hashes", "+ SHA-256 and SHA-1 over every block (the index's two digests here)"),
    ("ladder-slots", "`fastwarc_slots`: + framing checks, WARC fields, slot objects"),
    ("ladder-http", "+ the HTTP head of each record parsed, the hashes after it"),
    ("ladder-rows", "`Indexer`: + rows (digest check, dates, SURT keys), Arrow batches"),
    ("ladder-stream", "(s): + parts, merge and the parquet file"),
]
"""The ladder (``--ladder N``): each step does what the one before did plus one part of the
index, so the difference of two steps is what that part costs per record."""


def _ladder_step(kind: str, whole: str) -> tuple[float, float]:
    """Run one step of :data:`LADDER` on ``whole``; return (wall s, CPU s) of the work."""
    from fastwarc.warc import ArchiveIterator as FastIterator

    from citeaudit.archive.index import (
        CAPTURE_SCHEMA,
        ROW_GROUP_ROWS,
        Indexer,
        fastwarc_slots,
        hash_payload,
        parse_http_headers,
        streamed_index,
    )
    from citeaudit.parquet_io import write_batches

    sha256, sha1 = hashlib.sha256, hashlib.sha1
    t0, c0 = time.perf_counter(), time.process_time()
    if kind in ("ladder-inflate", "ladder-hashes"):
        with open(whole, "rb") as fh:
            for record in FastIterator(fh, parse_http=False):
                if kind == "ladder-hashes":
                    hash_payload(b"", record.reader, [sha256(), sha1()])
    elif kind == "ladder-slots":
        for slot in fastwarc_slots(whole, gz=True):
            hash_payload(b"", slot.block, [sha256(), sha1()])
    elif kind == "ladder-http":
        for slot in fastwarc_slots(whole, gz=True):
            head = b""
            if slot.rec_type != "warcinfo":
                _http, _raw, head = parse_http_headers(slot.block)
            hash_payload(head, slot.block, [sha256(), sha1()])
    elif kind == "ladder-rows":
        indexer = Indexer(Path(whole).name, False, lambda batch: None)
        indexer.run(fastwarc_slots(whole, gz=True))
        indexer.finish()
    else:
        with streamed_index([(Path(whole), Path(whole).name)], workers=1) as (batches, _s):
            write_batches(batches, CAPTURE_SCHEMA, Path(tempfile.gettempdir()) / "ladder.parquet",
                          row_group_rows=ROW_GROUP_ROWS)
    return time.perf_counter() - t0, time.process_time() - c0


def _run_ladder(whole: Path, rounds: int, n_records: int) -> None:
    """Print the ladder's medians (CPU of the work, fresh interpreters, steps interleaved) and
    the start-up CPU of both commands (a 50-record WARC, whole processes)."""
    import statistics

    small, _parts = generate(50)
    bindir = Path(sys.executable).parent
    startup = {
        "citeaudit index-warc": [str(bindir / "citeaudit"), "index-warc", str(small), "--out",
                                 str(CACHE / "results" / "small.parquet"), "--workers", "1"],
        "cdxj-indexer": [str(bindir / "cdxj-indexer"), str(small), "-o", os.devnull],
    }
    cpu: dict[str, list[float]] = {}
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for _ in range(rounds):
        for kind, _label in LADDER:
            res = _run_child(kind, whole, [], CACHE / "results" / f"{kind}.out")
            cpu.setdefault(kind, []).append(res["cpu_seconds"])
        for name, cmd in startup.items():
            cpu.setdefault(name, []).append(_command(cmd)[1])
    print(f"Ladder: {whole.name}, {n_records} records, {rounds} interleaved rounds, median CPU; "
          f"load average before/after: {load_before} / "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| step | CPU s | µs/record | this part, µs/record |")
    print("|---|---:|---:|---:|")
    before = 0.0
    for kind, label in LADDER:
        median = statistics.median(cpu[kind])
        print(f"| {label} | {median:.2f} | {1e6 * median / n_records:.1f} | "
              f"{1e6 * (median - before) / n_records:.1f} |")
        before = median
    for name in startup:
        print(f"| start-up of the `{name}` command (50-record WARC, whole process) | "
              f"{statistics.median(cpu[name]):.2f} | | |")


def _run_child(kind: str, whole: Path, parts: list[Path], out: Path) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--out", str(out),
           str(whole), *map(str, parts)]
    pythonpath = str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, PYTHONPATH=pythonpath)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode:
        raise SystemExit(f"{kind} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


MEASUREMENTS = [
    ("cdxj-indexer", "a. cdxj-indexer 1.5.0 (Python API, default options)"),
    ("warcio-hash-loop", "b. bare warcio loop: iterate + sha256 every payload"),
    ("index_file-warcio", "c. `index_file(reader=\"warcio\")`"),
    ("index_file-fastwarc", "d. `index_file(reader=\"fastwarc\")`"),
    ("stream-1proc", "s. streamed index to parquet, 1 process"),
    ("stream-1proc-x3", "s3. (s) on the 3x file"),
    ("stream-parts-2workers", "e. streamed index, 4 part files, 2 workers"),
    ("index_file+cdxj", "f. (d) + `to_cdxj_lines` (sorted CDXJ)"),
    ("stream-single-2workers", "g. streamed index, the single file, 2 workers"),
    ("fastwarc-hash-loop", "context: bare FastWARC loop + sha256 every block"),
    ("surt-only", "context: `surt.surt` of every target URI (paid by a-g)"),
    ("whole-processes", "w. `citeaudit index-warc --out x.parquet --workers 1`, whole process"),
    ("whole-processes-x3", "w3. (w) on the 3x file"),
]


def _check_outputs(results_dir: Path) -> list[str]:
    """Identical rows from (c), (d), (s), (g); (e) the same captures; (s3) 3x the rows; CDXJ."""
    import pyarrow.parquet as pq

    def read(kind: str):
        return pq.read_table(results_dir / f"{kind}.out.parquet").replace_schema_metadata(None)

    notes = []
    c, d = read("index_file-warcio"), read("index_file-fastwarc")
    same_cd = c.equals(d)
    notes.append(f"rows: warcio {c.num_rows}, fastwarc {d.num_rows}, identical: {same_cd}")
    streamed = read("stream-1proc")
    same_s = streamed.equals(d)
    notes.append(f"streamed index, 1 process: {streamed.num_rows} rows, identical to (d): "
                 f"{same_s}")
    x3 = pq.ParquetFile(results_dir / "stream-1proc-x3.out.parquet").metadata.num_rows
    same_x3 = x3 == 3 * d.num_rows
    notes.append(f"streamed index of the 3x file: {x3} rows (3 x {d.num_rows}: {same_x3})")
    e = read("stream-parts-2workers")
    drop = ["file", "offset", "length"]
    keys = [n for n in c.schema.names if n not in drop]
    same_e = sorted(map(str, e.select(keys).to_pylist())) == sorted(
        map(str, d.select(keys).to_pylist()))
    notes.append(f"4 part files: {e.num_rows} rows, same captures as one file: {same_e}")
    g = read("stream-single-2workers")
    same_g = g.equals(d)
    notes.append(f"the single file, 2 workers: {g.num_rows} rows, identical to (d): {same_g}")
    theirs = sorted((results_dir / "cdxj-indexer.out").read_text().splitlines())
    ours = (results_dir / "index_file+cdxj.out").read_text().splitlines()
    notes.append(f"CDXJ lines: cdxj-indexer {len(theirs)}, ours {len(ours)}, "
                 f"identical: {theirs == ours}")
    if not (same_cd and same_s and same_x3 and same_e and same_g and theirs == ours):
        notes.append("OUTPUT MISMATCH")
    return notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=21000)
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per measurement")
    parser.add_argument("--ladder", type=int, default=0, metavar="ROUNDS",
                        help="only the per-part ladder of the one-process index, ROUNDS rounds")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        result = _measure(args.child, args.files[0], args.files[1:], args.out)
        print(json.dumps(result))
        return 0

    whole, parts = generate(args.records)
    if args.ladder:
        (CACHE / "results").mkdir(exist_ok=True)
        _run_ladder(whole, args.ladder, _count_records(whole))
        return 0
    tripled(whole)
    n_records = _count_records(whole)
    size_mb = whole.stat().st_size / 1e6
    results_dir = CACHE / "results"
    results_dir.mkdir(exist_ok=True)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    for kind, label in MEASUREMENTS:
        best = None
        for _ in range(args.repeat):
            res = _run_child(kind, whole, parts, results_dir / f"{kind}.out")
            if best is None or res["seconds"] < best["seconds"]:
                best = res
        rows.append((label, best))
        print(f"{label}: {best['seconds']:.2f} s", file=sys.stderr, flush=True)

    base = rows[0][1]["seconds"]
    print(f"\nWARC: {whole.name}, {size_mb:.1f} MB, {n_records} records "
          f"({len(parts)} part files for e; 3x: {3 * size_mb:.1f} MB, {3 * n_records} records)")
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print("Command: .venv/bin/python benchmarks/bench_index.py"
          + (f" --repeat {args.repeat}" if args.repeat > 1 else ""))
    print(f"Load average before/after: {load_before} / "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| measurement | seconds | records/s | vs cdxj-indexer | CPU s | vs cdxj-indexer (CPU)"
          " | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    base_cpu = rows[0][1]["cpu_seconds"]
    by_kind = {}
    for label, res in rows:
        by_kind[res["kind"]] = res
        records = 3 * n_records if res["kind"].endswith("x3") else n_records
        rss = f"{res['rss_mb']:.0f}"
        if "2workers" in res["kind"]:
            rss += f" (+ workers {res['child_rss_mb']:.0f} each)"
        cpu = res["cpu_seconds"]
        if res["kind"].startswith("whole-processes"):
            ratio = res["theirs"] / res["seconds"]
            label += (f" (cdxj-indexer command: {res['theirs']:.2f} s, "
                      f"{res['theirs_cpu']:.2f} CPU s)")
            rss = f"{res['rss_mb']:.0f} (cdxj-indexer: {res['theirs_rss_mb']:.0f})"
            cpu_cells = f"{cpu:.2f} | {res['theirs_cpu'] / cpu:.2f}x"
        else:
            ratio = base * records / n_records / res["seconds"]
            cpu_cells = ("- | -" if cpu is None else
                         f"{cpu:.2f} | {base_cpu * records / n_records / cpu:.2f}x")
        print(f"| {label} | {res['seconds']:.2f} | {records / res['seconds']:,.0f} | "
              f"{ratio:.2f}x | {cpu_cells} | {rss} |")
    single, x3 = by_kind["stream-1proc"], by_kind["stream-1proc-x3"]
    print()
    print(f"- target 1, one process >= 2x cdxj-indexer: (s) is "
          f"{base / single['seconds']:.2f}x in wall time, "
          f"{base_cpu / single['cpu_seconds']:.2f}x in CPU time ((d), the whole-table path: "
          f"{base / by_kind['index_file-fastwarc']['seconds']:.2f}x wall)")
    print(f"- target 2, peak RSS <= 150 MB and flat: (s) {single['rss_mb']:.0f} MB, "
          f"(s3) {x3['rss_mb']:.0f} MB, 3x / 1x = {x3['rss_mb'] / single['rss_mb']:.3f}")
    w, w3 = by_kind["whole-processes"], by_kind["whole-processes-x3"]
    print(f"- whole `citeaudit index-warc` processes: {w['theirs'] / w['seconds']:.2f}x wall, "
          f"{w['theirs_cpu'] / w['cpu_seconds']:.2f}x CPU against the cdxj-indexer command; "
          f"peak RSS (w) {w['rss_mb']:.0f} MB, (w3) {w3['rss_mb']:.0f} MB, "
          f"3x / 1x = {w3['rss_mb'] / w['rss_mb']:.3f}")
    print()
    notes = _check_outputs(results_dir)
    for note in notes:
        print(f"- {note}")
    return 1 if "OUTPUT MISMATCH" in notes else 0


if __name__ == "__main__":
    sys.exit(main())
