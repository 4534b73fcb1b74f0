"""A progress callback for batch indexing: a rich bar on stderr, or nothing.

Why here: :func:`citeaudit.archive.index.index_paths` reports each finished file; the display
(and the import of rich) is kept out of the indexing code and only loaded when asked for.
"""

from __future__ import annotations

from typing import Any


class ProgressBar:
    """Context manager giving an ``advance(name)`` callback; a rich bar on stderr if asked."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self._bar: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return lambda _name: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._bar = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=Console(stderr=True), transient=False,
        )
        self._bar.start()
        task = self._bar.add_task("indexing WARCs", total=self.total)
        return lambda name: self._bar.update(task, advance=1, description=f"indexed {name}")

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
