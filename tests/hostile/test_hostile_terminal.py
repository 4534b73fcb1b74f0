"""Terminal output escapes data: names from inputs that are Rich markup (``[/bold]``) or
terminal control sequences print as written through the real CLI (``summary``, ``check``,
``run``), never crash it and never reach the terminal as escapes. Reads the shared small run
(a private copy of its outputs where a file changes); no pipeline run of its own."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from citeaudit import cli
from citeaudit.safe_text import safe

HOSTILE = ["[/bold]", "[red]x", "a\x1b[2Jb", "\u202eevil", "[bold]\x07bell\x00", "x\\[/red]"]


@pytest.mark.parametrize("name", HOSTILE)
def test_safe_prints_the_name_as_written(name: str) -> None:
    console = Console(record=True, width=200, color_system=None)
    console.print(f"[red]error:[/red] {safe(name)} ok")
    shown = console.export_text()
    assert "\x1b" not in shown and "\u202e" not in shown
    visible = name.encode("unicode_escape").decode("ascii").replace("\\\\", "\\")
    assert f"error: {visible} ok" in shown


def _rename_engines(derived, name: str) -> int:
    """Every engine of the metrics tables becomes ``name`` (as an import could name it)."""
    n = 0
    for path in derived.glob("metrics/*/*/data.parquet"):
        t = pq.read_table(path)
        i = t.schema.get_field_index("engine")
        t = t.set_column(i, t.schema.field(i), pa.array([name] * t.num_rows, pa.string()))
        pq.write_table(t, path)
        n += 1
    return n


def test_summary_with_a_markup_engine_name(small_run, tmp_path, capsys) -> None:
    derived = tmp_path / "derived"  # summary reads the derived folder only: copy just that
    shutil.copytree(small_run.derived, derived, symlinks=True)
    assert _rename_engines(derived, "[/bold]\x1b[31m") > 0
    assert cli.main(["summary", "--derived", str(derived)]) == 0
    out = capsys.readouterr().out
    assert "[/bold]" in out and "\x1b[31m" not in out and "\\x1b[31m" in out


def test_check_and_run_with_markup_file_names(tmp_path, capsys) -> None:
    raw = tmp_path / "raw"
    (raw / "annotations" / "support").mkdir(parents=True)
    for name in ("[/bold].txt", "x\x1b[2J.csv", "[red]unclosed.txt"):
        path = raw / "annotations" / "support" / name  # "[/bold].txt": a file in a folder "["
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    assert cli.main(["check", "--raw", str(raw)]) in (0, 1)
    err = capsys.readouterr().err
    assert "[/bold].txt" in err and "\x1b[2J" not in err and "[red]unclosed.txt" in err
    # run prints what it will not read before anything else; here it stops there (no dates)
    code = cli.main(["run", "--raw", str(raw), "--derived", str(tmp_path / "derived")])
    err = capsys.readouterr().err
    assert code == 2 and "[/bold].txt" in err and "no answers/<YYYY-MM-DD>/" in err


def test_run_refuses_a_codebook_name_that_breaks_partition_paths(tmp_path, capsys) -> None:
    """``codebooks/v=1.yaml`` would become ``codebook=v=1``: refused at the door, named."""
    import yaml

    from citeaudit.demo_corpus.codebooks import codebook as demo_codebook

    raw = tmp_path / "raw"
    (raw / "answers" / "2026-11-01").mkdir(parents=True)
    (raw / "answers" / "2026-11-01" / "a.jsonl").write_text("")
    (raw / "codebooks").mkdir()
    (raw / "codebooks" / "v=1.yaml").write_text(yaml.safe_dump({**demo_codebook("v1"),
                                                               "version": "v=1"}))
    code = cli.main(["run", "--raw", str(raw), "--derived", str(tmp_path / "derived")])
    err = capsys.readouterr().err
    assert code == 2 and "'v=1' is not a version name" in err
