"""Query panels: the questions ``citeaudit collect`` asks an engine.

A panel is a file read as-is: JSONL with one object a line (``query`` or ``prompt_text``, and
an optional ``prompt_id`` or ``query_id``: the Liu et al. panels in
``../shared/corpora/queries/``), or plain text with one query a line. The file's stem is the
panel name, kept as the answers' stratum (``strata.domain``).
"""

from __future__ import annotations

import json
from pathlib import Path

from citeaudit.imports.engines import Query
from citeaudit.imports.writer import short_id

TEXT_KEYS = ("query", "prompt_text", "question")
ID_KEYS = ("query_id", "prompt_id", "id")


def read_panel(path: Path) -> list[Query]:
    """The queries of a panel file, in file order; a bad line is an error naming file and line.

    Query ids are ``<panel>-<id>`` when the file's ids are unique, else ``<panel>-<hash of the
    text>`` (a repeated text gets ``-2``, ``-3``...), so they are stable when lines move.
    """
    path = Path(path)
    name = path.stem
    rows: list[tuple[str, str | None]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        if path.suffix == ".jsonl":
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not JSON: {exc}") from exc
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{n}: not a JSON object")
            text = next((obj[k] for k in TEXT_KEYS if isinstance(obj.get(k), str)), None)
            if not text or not text.strip():
                raise ValueError(f"{path}:{n}: no query field (one of {', '.join(TEXT_KEYS)})")
            qid = next((str(obj[k]) for k in ID_KEYS if obj.get(k) not in (None, "")), None)
        else:
            text, qid = line.strip(), None
        rows.append((text, qid))
    ids = [qid for _, qid in rows]
    if None in ids or len(set(ids)) != len(ids):
        seen: dict[str, int] = {}
        ids = []
        for text, _ in rows:
            h = short_id(text, n=12)
            seen[h] = seen.get(h, 0) + 1
            ids.append(h if seen[h] == 1 else f"{h}-{seen[h]}")
    return [Query(f"{name}-{qid}", text, name) for (text, _), qid in zip(rows, ids, strict=True)]
