"""The ``citeaudit`` parser imports a subcommand's module only when that subcommand runs.

Why: every command used to pay for importing all of them (dagster, duckdb, the demo corpus)
before doing anything. The lazy parser must still print exactly what the whole one prints.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from citeaudit import cli

sys.path.insert(0, str(Path(__file__).parent / "archive"))
from archive_fixtures import write_warc  # noqa: E402


def _commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


LAZY_NAMES = [name for _, _, commands in cli.LAZY_COMMANDS for name, _ in commands]


def test_top_level_help_is_the_whole_parsers_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    whole, lazy = cli.build_parser(), cli.build_parser(None)
    assert lazy.format_help() == whole.format_help()
    assert list(_commands(lazy).choices) == list(_commands(whole).choices)
    helps = {a.dest: a.help for a in _commands(whole)._choices_actions}
    assert {name: helps[name] for name in LAZY_NAMES} == {
        name: help_line for _, _, commands in cli.LAZY_COMMANDS for name, help_line in commands
    }


@pytest.mark.parametrize("command", LAZY_NAMES)
def test_each_command_help_is_unchanged(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    whole = _commands(cli.build_parser()).choices[command]
    lazy = _commands(cli.build_parser(command)).choices[command]
    assert lazy.format_help() == whole.format_help()
    assert lazy.get_default("func") is whole.get_default("func")


def test_command_word_is_found_past_top_level_flags() -> None:
    assert cli._command_named(["index-warc", "x.warc", "--out", "y"]) == "index-warc"
    assert cli._command_named(["--version"]) is None
    assert cli._command_named(["-h", "run"]) == "run"


def test_index_warc_process_does_not_import_the_pipeline(tmp_path: Path) -> None:
    warc = write_warc(tmp_path / "tiny.warc.gz")
    out = tmp_path / "tiny.parquet"
    heavy = ("dagster", "pandas", "duckdb", "citeaudit.demo_corpus", "pipelines")
    code = (
        "import json, sys\n"
        "from citeaudit import cli\n"
        f"rc = cli.main(['index-warc', {str(warc)!r}, '--out', {str(out)!r}, '--workers', '1'])\n"
        f"print(json.dumps([rc, [m for m in {heavy!r} if m in sys.modules]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    rc, imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert rc == 0 and out.is_file()
    assert imported == []


def test_one_rule_for_the_dagster_instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture) -> None:
    """DAGSTER_HOME when set, else DERIVED/.dagster_home: `run --help` says so, and the printed
    `citeaudit ui` hint names DAGSTER_HOME whenever it is not the default, so it opens the
    instance the run used (after `make demo`, ./.dagster_home), never an empty one."""
    from citeaudit import ops_cli
    from pipelines import runner

    raw, derived = tmp_path / "raw", tmp_path / "derived"
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert ops_cli.ui_command(raw, derived) == f"citeaudit ui --raw {raw} --derived {derived}"
    assert runner.default_dagster_home(derived) == (derived / ".dagster_home").resolve()
    monkeypatch.setenv("DAGSTER_HOME", str(derived / ".dagster_home"))
    assert ops_cli.ui_command(raw, derived).startswith("citeaudit ui")
    project = tmp_path / ".dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(project))
    assert ops_cli.ui_command(raw, derived) == (
        f"DAGSTER_HOME={project.resolve()} citeaudit ui --raw {raw} --derived {derived}")
    assert runner.ensure_dagster_home(derived) == project.resolve()
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "DAGSTER_HOME when it is set" in text and "DERIVED/.dagster_home" in text


@pytest.mark.parametrize(("name", "body"), [
    ("notes.txt", b"line one\nline two\n" * 5),
    ("fake.warc.gz", b"<html>not an archive</html>\n"),
    ("empty.warc", b""),
])
def test_index_warc_refuses_a_file_that_is_not_an_archive(tmp_path: Path, capsys, name,
                                                          body) -> None:
    """A text file given to index-warc is refused with a message and exit 2, nothing printed
    on stdout (it used to print 10 index lines and exit 0)."""
    bad = tmp_path / name
    bad.write_bytes(body)
    good = write_warc(tmp_path / "tiny.warc.gz")
    assert cli.main(["index-warc", str(good), str(bad)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert f"index-warc: {bad}: not a WARC, ARC or WACZ file" in out.err
    assert "nothing indexed (1 of 2 file(s) refused)" in out.err
    assert cli.main(["index-warc", str(good)]) == 0
    assert capsys.readouterr().out.count("\n") >= 1


def test_dates_left_in_derived_without_raw_folders_are_named(tmp_path: Path) -> None:
    """A re-import that moved a response to another date leaves the old date's outputs: the
    summary names such dates instead of counting them silently."""
    from citeaudit import ops_cli

    raw, derived = tmp_path / "raw", tmp_path / "derived"
    (raw / "answers" / "2026-11-30").mkdir(parents=True)
    (raw / "warc" / "2026-11-28").mkdir(parents=True)
    for day in ("2026-11-28", "2026-11-29", "2026-11-30"):
        (derived / "answers" / f"observation_date={day}").mkdir(parents=True)
    assert ops_cli.orphan_dates(raw, derived) == ["2026-11-29"]
