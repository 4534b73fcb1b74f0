"""Shared fixtures: the real third-party corpora beside the project, and tmp folders."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
CORPORA = PROJECT.parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def corpora() -> Path:
    """../shared/corpora, or a skip that says why the test could not run."""
    if not CORPORA.is_dir():
        pytest.skip(
            f"real corpora not found at {CORPORA} (they live beside the project in ../shared)"
        )
    return CORPORA
