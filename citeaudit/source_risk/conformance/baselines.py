"""Rule projections compared with the endpoint in the source-risk specification's conformance suite
(docs/references.md).

Each takes a state (I, A, M, D) with "U" for unresolved, plus passage support, and returns 1, 0
or "U". ``guarded`` applies the common four-predicate completeness guard.
"""

from __future__ import annotations

from collections.abc import Callable

U = "U"
Rule = Callable[[tuple, int], object]


def support_only(state: tuple, support: int) -> object:
    """Zero when passage support is present: support is taken to settle the audit."""
    return 0 if support == 1 else U


def relationship_only(state: tuple, support: int) -> object:
    """Returns I: a relationship alone is taken as the omission."""
    return state[0]


def disclosure_only(state: tuple, support: int) -> object:
    """1 - D when D is observed, U otherwise (an oracle-feature disclosure proxy)."""
    return U if state[3] == U else 1 - state[3]


def guarded(rule: Rule) -> Rule:
    """The same rule behind the common guard: U whenever any predicate is U."""
    def wrapped(state: tuple, support: int) -> object:
        return U if U in state else rule(state, support)
    wrapped.__name__ = f"guarded_{rule.__name__}"
    return wrapped


def short_circuit(state: tuple, support: int) -> object:
    """Resolve a negative as soon as I=0, A=0, M=0 or D=1, even with another predicate U."""
    i, a, m, d = state
    if i == 0 or a == 0 or m == 0 or d == 1:
        return 0
    if U in state:
        return U
    return 1


BASELINES: dict[str, Rule] = {
    "support_only": support_only,
    "relationship_only": relationship_only,
    "disclosure_only": disclosure_only,
}
