"""Text from inputs, made safe to print through rich (a light module: the CLI imports it at
start). Engine names, file names, reasons and error messages all come from data someone else
wrote; printed inside a markup string they must show as written."""

from __future__ import annotations

import re

from rich.markup import escape

# Characters a terminal acts on instead of showing: C0 controls (tab and newline kept), DEL,
# C1 controls and the bidirectional overrides that reorder what follows them.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(value: object) -> str:
    """``value`` as text to put inside a rich markup string: names, paths, reasons and errors
    come from inputs, so ``[/bold]`` prints as written (not as a tag that crashes the
    print) and an escape sequence or a control character prints as its ``\\x1b`` code
    (never moving the cursor, recolouring or clearing the terminal)."""
    text = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value))
    return escape(text)
