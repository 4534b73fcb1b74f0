"""Deterministic, realistic demo corpus for citeaudit: answers, WARCs, annotations, truth.

``generate(out, seed=7, answers=600, days=3, start_date=date(2026, 11, 1))`` writes the
inputs the pipeline reads (``answers/``, ``warc/``, ``annotations/``, ``codebooks/``) and a
``ground_truth.json`` listing every planted defect; ``register_cli`` adds the ``demo-corpus``
subcommand. See :mod:`citeaudit.demo_corpus.generate` for the layout and the rules.
"""

from typing import Any

from citeaudit.demo_corpus import site
from citeaudit.demo_corpus.cli import register_cli as _register_corpus_cli
from citeaudit.demo_corpus.cli import register_label_cli as _register_label_cli
from citeaudit.demo_corpus.generate import generate


def register_cli(subparsers: Any) -> None:
    """Add ``demo-corpus``, ``demo-archive`` (the demo's live crawl of its own site) and
    ``demo-label`` (the demo's annotators label a drawn review sample)."""
    _register_corpus_cli(subparsers)
    site.register_cli(subparsers)
    _register_label_cli(subparsers)

__all__ = ["generate", "register_cli"]
