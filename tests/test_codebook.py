"""Codebook loading: the demo codebooks validate, and every bad file fails naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from citeaudit import codebook
from citeaudit.demo_corpus.codebooks import codebook as demo_codebook
from citeaudit.demo_corpus.codebooks import write_codebooks


@pytest.fixture()
def books(tmp_path: Path) -> Path:
    write_codebooks(tmp_path / "codebooks")
    return tmp_path


def test_demo_codebooks_load(books: Path) -> None:
    v1 = codebook.load_version(books, "v1")
    v2 = codebook.load_version(books, "v2")
    assert v1.map_label("demo_support", "partial") == "partially_supported"
    assert v2.map_label("demo_support", "partial") == "unsupported"
    assert v1.alignment_window.before_days == 7 and v1.alignment_window.after_days == 1
    assert v1.is_tracking_param("utm_campaign") and v1.is_tracking_param("FBCLID")
    assert not v1.is_tracking_param("id")
    assert len(v1.sha256) == 64 and v1.sha256 != v2.sha256


def _write(tmp_path: Path, doc: dict | str, name: str = "v9") -> Path:
    path = tmp_path / "codebooks" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc), encoding="utf-8")
    return path


def _doc(**changes) -> dict:
    doc = demo_codebook("v1")
    doc["version"] = "v9"
    doc.update(changes)
    return doc


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"colour": "blue"}, "unknown key(s) colour"),
        ({"priority_weights": {"d_Q": 0.5, "d_R": 0.4}}, "sum to 0.9"),
        ({"label_maps": {"s": {"yes": "mostly_supported"}}}, "label_maps.s.yes"),
        ({"version": "v8"}, "does not match the file name"),
        ({"alignment_window": {"before_days": "7"}}, "alignment_window.before_days"),
        ({"policy": {"contextualize_above": 0.5, "review_unresolved": False}}, "REVIEW"),
        ({"review_sampling": {"supported_rate": 1.5}}, "review_sampling.supported_rate"),
        ({"support_schema": "nope"}, "support_schema"),
    ],
)
def test_bad_codebook_names_file_and_key(tmp_path: Path, change: dict, needle: str) -> None:
    path = _write(tmp_path, _doc(**change))
    with pytest.raises(codebook.CodebookError) as err:
        codebook.load(path)
    assert str(path) in str(err.value)
    assert needle in str(err.value)


def test_label_mapped_twice_is_refused_with_lines(tmp_path: Path) -> None:
    text = yaml.safe_dump(_doc(), sort_keys=False)
    text = text.replace("    supports: fully_supported\n",
                        "    supports: fully_supported\n    supports: unsupported\n")
    path = _write(tmp_path, text)
    with pytest.raises(codebook.CodebookError, match=r"'supports' appears twice .*lines"):
        codebook.load(path)


def test_missing_version_names_known_ones(books: Path) -> None:
    with pytest.raises(codebook.CodebookError, match=r"'v7' does not exist \(known: v1, v2\)"):
        codebook.load_version(books, "v7")


def test_invalid_yaml(tmp_path: Path) -> None:
    path = _write(tmp_path, "version: [unclosed\n")
    with pytest.raises(codebook.CodebookError, match="not valid YAML"):
        codebook.load(path)


def test_support_schema_and_import_codebook(tmp_path: Path) -> None:
    from citeaudit.imports.codebook import import_codebook
    from citeaudit.support import judgments

    book = codebook.load(_write(tmp_path, _doc(support_schema="demo_support")))
    assert book.support_schema == "demo_support"
    assert judgments.default_schema(book) == "demo_support"
    # one label map: it is the default; several and no support_schema: rows must name one
    assert judgments.default_schema(codebook.load(_write(tmp_path, _doc()))) == "demo_support"
    doc = import_codebook()
    imported = codebook.load(_write(tmp_path, doc, name="v1"))
    assert set(imported.label_maps) == {"liu2023", "liu2023_statement", "expertqa"}
    assert judgments.default_schema(imported) == ""
    assert imported.map_label("liu2023", "Citation Inaccessible") == "unresolved"
