"""citeaudit: the library of the citation audit (the Dagster layer is ``assets`` and ``pipelines``).

:func:`project_file` finds the files the code reads that the repository keeps outside the Python
packages: the SQL files (``sql/``), the data dictionary (``docs/tables.md``) and the Dagster
instance file (``dagster.yaml``). The build maps them into the wheel (``setup.py``), so a Celery
worker or a user who installed the package reads the same files as a source checkout.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

# The repository root when citeaudit runs from a source checkout (editable install, or the
# checkout on sys.path); in an installed wheel this is site-packages, which has no pyproject.toml.
_CHECKOUT = Path(__file__).resolve().parent.parent


def project_file(package: str, folder: str, name: str) -> Path:
    """The file ``folder/name`` of the repository, wherever citeaudit runs from.

    From a source checkout: the repository's own file (so an edit of a SQL file takes effect at
    once, and a checkout on sys.path never reads another copy). Installed: ``name`` inside
    ``package``, the package the build maps ``folder`` onto (``citeaudit.sql`` for ``sql``,
    ``citeaudit.docs`` for ``docs``, ``pipelines`` for a file at the root), found with
    :mod:`importlib.resources`. The path may not exist; the caller says what is missing.
    """
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / folder).is_dir():
        return _CHECKOUT / folder / name
    return Path(os.fspath(files(package).joinpath(name)))
