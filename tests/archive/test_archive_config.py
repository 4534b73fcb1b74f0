"""The archives: and replay: sections of citeaudit.yaml: defaults off, the Internet Archive in
one documented entry, every mistake named by file and key."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from citeaudit import config
from citeaudit.archive.lookup import add_replay_column


def load(tmp_path: Path, text: str) -> config.Config:
    (tmp_path / config.CONFIG_FILE).write_text(text, encoding="utf-8")
    return config.load(tmp_path)


def test_defaults_ask_no_archive_and_make_no_links(tmp_path: Path) -> None:
    cfg = config.load(tmp_path)
    assert cfg.archives == () and cfg.replay.link_prefix() is None


def test_internet_archive_is_one_entry(tmp_path: Path) -> None:
    cfg = load(tmp_path, "fetch:\n  contact: ops@example.org\narchives:\n"
                         "  - {name: ia, api: wayback, url: https://web.archive.org}\n"
                         "replay:\n  base_url: http://127.0.0.1:8090/\n")
    assert cfg.archives == (config.ArchiveSettings("ia", "wayback", "https://web.archive.org"),)
    assert cfg.replay.link_prefix() == "http://127.0.0.1:8090/citeaudit"
    cfg = load(tmp_path, "fetch:\n  contact: ops@example.org\narchives:\n"
                         "  - {name: ia, api: wayback, url: https://web.archive.org,"
                         " no_capture_cache_days: 30}\n")
    assert cfg.archives[0].no_capture_cache_days == 30.0


@pytest.mark.parametrize(("text", "message"), [
    ("archives:\n  - {name: ia, api: wayback, url: https://web.archive.org}\n",
     "fetch.contact: required when archives are configured"),
    ("fetch: {contact: a@b}\narchives: {name: ia}\n", "archives: expected a list"),
    ("fetch: {contact: a@b}\narchives:\n  - {name: ia, api: timetravel, url: http://x}\n",
     "archives[0].api: one of pywb, wayback, wayback-availability, memento"),
    ("fetch: {contact: a@b}\narchives:\n  - {name: IA, api: pywb, url: http://x}\n",
     "archives[0].name: lower-case letters"),
    ("fetch: {contact: a@b}\narchives:\n  - {name: a, api: pywb, url: http://x}\n"
     "  - {name: a, api: pywb, url: http://y}\n", "archives[1].name: duplicate"),
    ("fetch: {contact: a@b}\narchives:\n  - {name: a, api: pywb}\n", "archives[0].url: required"),
    ("fetch: {contact: a@b}\narchives:\n  - {name: a, api: pywb, url: ftp://x}\n",
     "archives[0].url: expected an http(s) URL"),
    ("fetch: {contact: a@b}\narchives:\n  - {name: a, api: pywb, url: http://x, port: 1}\n",
     "archives[0].port: unknown key"),
    ("replay: {base_url: 127.0.0.1:8090}\n", "replay.base_url: expected an http(s) URL"),
    ("replay: {collection: 'a b'}\n", "replay.collection: letters"),
    ("replay: {port: 8090}\n", "replay.port: unknown key"),
])
def test_mistakes_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(config.ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        load(tmp_path, text)


def test_replay_links_are_whole_seconds_utc_and_null_without_a_capture() -> None:
    ts = pa.array([1677628800_123456, None], pa.timestamp("us", tz="UTC"))
    table = pa.table({"t": ts, "u": ["http://a.test/x?y=1", "http://b.test/"]})
    out = add_replay_column(table, "http://127.0.0.1:8090/c", "t", "u")
    assert out.column("replay_url").to_pylist() == [
        "http://127.0.0.1:8090/c/20230301000000/http://a.test/x?y=1", None]
    off = add_replay_column(table, None, "t", "u")
    assert off.column("replay_url").to_pylist() == [None, None]


def test_fetch_browser_is_a_choice_named_by_key(tmp_path: Path) -> None:
    cfg = load(tmp_path, "fetch:\n  browser: auto\n  browser_timeout_seconds: 20\n")
    assert (cfg.fetch.browser, cfg.fetch.browser_timeout_seconds) == ("auto", 20.0)
    assert config.load(tmp_path / "nowhere").fetch.browser == "never"
    with pytest.raises(config.ConfigError, match=r"fetch\.browser: one of never, auto, always"):
        load(tmp_path, "fetch:\n  browser: sometimes\n")
    with pytest.raises(config.ConfigError, match=r"fetch\.browser_max_requests: must be at"):
        load(tmp_path, "fetch:\n  browser_max_requests: 0\n")


def test_a_fetch_window_wider_than_a_codebook_window_is_one_loud_line(tmp_path: Path) -> None:
    """The crawl counts a capture within fetch.reference_window_hours as near the reference
    time and fetches nothing; the alignment accepts only its codebook window: wider on a side
    leaves citations unresolved with nothing fetched. One line per codebook, both files and
    keys named with the fix; narrower (only a cost) and equal are quiet."""
    from citeaudit.archive.capture import window_warnings
    from citeaudit.demo_corpus.codebooks import write_codebooks

    write_codebooks(tmp_path / "codebooks")
    assert window_warnings(tmp_path, config.FetchSettings()) == []      # the defaults agree
    assert window_warnings(tmp_path, config.FetchSettings(reference_window_hours=6)) == []
    lines = window_warnings(tmp_path, config.FetchSettings(reference_window_hours=168))
    assert len(lines) == 2 and all(line.startswith("warning: ") for line in lines)
    assert "citeaudit.yaml: fetch.reference_window_hours 168 is wider than" in lines[0]
    assert "v1.yaml: alignment_window.after_days 1 (24 h)" in lines[0]
    assert "before_days" not in lines[0]   # 7 days: not narrower than 168 h
    assert "set fetch.reference_window_hours: 24 or less" in lines[0]
    assert all("\n" not in line for line in lines)
