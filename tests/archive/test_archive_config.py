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
    ("fetch: {contact: a@b}\narchives:\n  - {name: ia, api: memento, url: http://x}\n",
     "archives[0].api: one of pywb, wayback, wayback-availability"),
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
