"""The test oracle of the source-risk specification's conformance suite (docs/references.md),
expressed apart from the resolver.

Membership in the explicit positive set for fully observed states, "U" otherwise. It shares no
code with ``sql/source_risk/resolve_omission.sql``; it states the same rule another way.
"""

from __future__ import annotations

POSITIVE_SET = frozenset({(1, 1, 1, 0)})
UNRESOLVED = "U"


def expected(state: tuple) -> object:
    """1, 0 or "U" for a state of (I, A, M, D) with "U" for an unresolved predicate."""
    if UNRESOLVED in state:
        return UNRESOLVED
    return 1 if tuple(state) in POSITIVE_SET else 0
