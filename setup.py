"""The part of the build that ``pyproject.toml`` cannot say: repository folders that ship inside
the packages under another name.

Everything else (metadata, dependencies, package data) is in ``pyproject.toml``. The SQL files
stay where the project keeps them, ``sql/<stage>/verb_object.sql`` at the top of the repository,
and the wheel carries them as ``citeaudit/sql/``; the data dictionary ``docs/tables.md`` ships as
``citeaudit/docs/tables.md`` and the project's Dagster instance file ``dagster.yaml`` as
``pipelines/dagster.yaml``. The code finds all three through :func:`citeaudit.project_file`, from a
checkout and from an installed wheel alike. ``pyproject.toml`` can map a folder onto a package
(``package-dir``) but then needs every package listed by hand; here the packages are still found
on their own, so a new subpackage needs no edit of the build files.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

# Package name -> repository folder it is built from (its files: package-data, pyproject.toml).
MAPPED = {"citeaudit.sql": "sql", "citeaudit.docs": "docs"}
# Single repository files copied into a package of the wheel: source -> destination.
COPIED = {"dagster.yaml": "pipelines/dagster.yaml"}


class BuildPy(build_py):
    """``build_py`` that also copies :data:`COPIED` into the built packages (and names them as
    sources, so an sdist carries them too)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the repository files in place
        for source, target in COPIED.items():
            self.copy_file(source, str(Path(self.build_lib) / target))

    def get_source_files(self) -> list[str]:
        return [*super().get_source_files(), *COPIED]


setup(
    packages=[*find_packages(include=["citeaudit*", "assets*", "pipelines*"]), *MAPPED],
    package_dir=MAPPED,
    cmdclass={"build_py": BuildPy},
)
