"""Shared helpers of the hostile-input tests: the real inputs, hostile values, mutations, and
the reasons docs/tables.md lets a rejection carry."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from citeaudit import catalog

PROJECT = Path(__file__).resolve().parents[2]


def corpora() -> Path:
    """../shared/corpora (or $CITEAUDIT_CORPORA, for a worktree elsewhere); a skip if absent."""
    root = Path(os.environ.get("CITEAUDIT_CORPORA") or PROJECT.parent / "shared" / "corpora")
    if not root.is_dir():
        pytest.skip(f"real corpora not found at {root} (they live beside the project in "
                    "../shared; set CITEAUDIT_CORPORA to point elsewhere)")
    return root


def accepted_reasons(table: str = "rejected_inputs", column: str = "reason") -> set[str]:
    """The values docs/tables.md lists for a reason column."""
    text = catalog.dictionary()[table].columns[column][1]
    return set(re.findall(r"`([^`]+)`", text.split("Values:", 1)[1]))


def deep(levels: int) -> Any:
    """A JSON value nested ``levels`` deep (lists), built without recursion."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


# Values an attacker (or a broken exporter) puts where a field is expected.
HOSTILE_VALUES: list[Any] = [
    None, True, 0, -1, 1e20, -1e20, 10**30, 2**63, 1.5, "", "[/bold]", "[red]x[/red]",
    "\x1b[2J\x1b[31mred", "=cmd|' /C calc'!A0", "../../etc/passwd", "a=b/c", "\u202egnp.exe",
    "x" * 10_000, [], {}, [1, "a"], {"a": {"b": None}}, deep(200), "\ud800", float("nan"),
]


def paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys/indices) into a parsed JSON value, the root included."""
    out, stack = [], [(obj, prefix)]
    while stack:
        value, at = stack.pop()
        out.append(at)
        if isinstance(value, dict):
            stack.extend((v, (*at, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*at, i)) for i, v in enumerate(value))
    return sorted(out, key=lambda p: [str(x) for x in p])


def replaced(obj: Any, at: tuple, value: Any) -> Any:
    """A copy of ``obj`` with the value at path ``at`` replaced (or deleted when ``value`` is the
    DELETE marker)."""
    if not at:
        return value
    import copy

    out = copy.deepcopy(obj)
    parent = out
    for key in at[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[at[-1]]
    else:
        parent[at[-1]] = value
    return out


DELETE = object()
