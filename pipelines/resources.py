"""Resources: where the pipeline reads its inputs and writes its outputs."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

DEFAULT_RAW = "data/raw"
DEFAULT_DERIVED = "data/derived"


class PathsResource(dg.ConfigurableResource):
    """The raw input folder (answers, warc, annotations, codebooks) and the derived output folder.

    Relative paths resolve against the working directory of the process, as a user expects from
    ``citeaudit run --raw data/raw``.
    """

    raw_dir: str = DEFAULT_RAW
    derived_dir: str = DEFAULT_DERIVED

    @property
    def raw(self) -> Path:
        return Path(self.raw_dir).resolve()

    @property
    def derived(self) -> Path:
        return Path(self.derived_dir).resolve()


def paths_from_env() -> PathsResource:
    """Paths from CITEAUDIT_RAW / CITEAUDIT_DERIVED, else the project defaults."""
    return PathsResource(
        raw_dir=os.environ.get("CITEAUDIT_RAW", DEFAULT_RAW),
        derived_dir=os.environ.get("CITEAUDIT_DERIVED", DEFAULT_DERIVED),
    )
