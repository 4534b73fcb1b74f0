"""Reading untrusted JSON (engine responses, datasets, registry replies, Label Studio exports):
bounded nesting, strict UTF-8, finite numbers.

Every importer reads files someone else wrote (an engine's response, a dataset download). Python's
``json`` module accepts what the importers cannot use safely: nesting deep enough to exhaust the
interpreter's stack (``RecursionError`` at about 1,000 levels, here or in any recursive step
after), ``NaN``/``Infinity`` (which become timestamps that overflow and JSON no strict reader
accepts), integers of thousands of digits (``ValueError``), and ``\\ud800`` escapes that no UTF-8
file can hold. :func:`load_json` turns each of these into a :class:`JsonRejected` with a reason
of the ``rejected_inputs`` vocabulary (docs/tables.md), so the caller writes a rejection row and
goes on with the rest of the batch. The limits are in docs/limits.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

# Deepest nesting of objects and arrays an imported item may have. Real engine responses and
# dataset records nest about 8 levels; 64 leaves room and stays far from the stack limit.
MAX_JSON_DEPTH = 64
REJECTIONS_DIR = "import_rejections"
RAW_FRAGMENT = 2000  # characters of the offending item kept in a rejection row


class JsonRejected(ValueError):
    """A JSON text an importer refuses: ``reason`` (rejected_inputs vocabulary) and detail."""

    def __init__(self, reason: str, detail: str, field: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail, self.field = reason, detail, field


def _no_constant(name: str) -> Any:
    raise JsonRejected("invalid_number", f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JsonRejected("invalid_number", f"{text[:40]} is beyond a double's range")
    return value


def depth(obj: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), counted without recursion; stops
    counting once past ``limit``."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((c, level + 1) for c in children)
    return deepest


def decode_utf8(data: bytes) -> str:
    """``data`` as UTF-8, or :class:`JsonRejected` (``invalid_utf8``) naming the first bad byte
    (never a silent replacement character)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonRejected("invalid_utf8", f"byte {exc.start}: {exc.reason}") from None


def load_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse one JSON text an importer reads; :class:`JsonRejected` when it must be refused."""
    try:
        obj = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise JsonRejected("malformed_json", str(exc)) from None
    except RecursionError:
        raise JsonRejected("too_deep", f"nested deeper than {max_depth} levels") from None
    except JsonRejected:
        raise
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise JsonRejected("invalid_number", str(exc)[:300]) from None
    if depth(obj, max_depth) > max_depth:
        raise JsonRejected("too_deep", f"nested deeper than {max_depth} levels")
    encodable(obj)
    return obj


def encodable(obj: Any) -> None:
    """:class:`JsonRejected` (``invalid_utf8``) when ``obj`` holds a string no UTF-8 file can
    hold (a lone surrogate, from a ``\\ud800`` escape); ``too_deep`` when it nests too far to
    write."""
    try:
        json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonRejected("invalid_utf8", f"a \\u escape that is no character: {exc.reason}"
                           ) from None
    except RecursionError:
        raise JsonRejected("too_deep", "nested too deeply to write") from None
    except ValueError as exc:  # NaN or an infinite float in a value built by a caller
        raise JsonRejected("invalid_number", str(exc)[:200]) from None


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def need(obj: dict, key: str, kinds: type | tuple[type, ...], path: str,
         required: bool = True) -> Any:
    """``obj[key]`` when it is of ``kinds``; :class:`JsonRejected` (``missing_field`` or
    ``wrong_type``, field ``path``) when not. Absent and not required: None."""
    if key not in obj or obj[key] is None:
        if required:
            raise JsonRejected("missing_field", f"{key} is required", path)
        return None
    value = obj[key]
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise JsonRejected("wrong_type", f"expected {_kind(kinds)}, got bool", path)
    if not isinstance(value, kinds):
        raise JsonRejected("wrong_type", f"expected {_kind(kinds)}, got {type(value).__name__}",
                           path)
    return value


def _kind(kinds: type | tuple[type, ...]) -> str:
    names = [k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,))]
    return " or ".join({"str": "a string", "dict": "an object", "list": "a list"}.get(n, n)
                       for n in names)


def file_part(name: str) -> str:
    """``name`` made safe as part of a file name (an engine or system name from the data): only
    letters, digits, ``.``, ``_`` and ``-``; anything else (``/``, ``..``, ``=``, control
    characters) becomes ``_`` and a short hash keeps two such names apart."""
    safe = _SAFE_NAME.sub("_", name).strip(".") or "_"
    if safe == name and len(name) <= 80:
        return name
    return f"{safe[:60]}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def fragment(item: Any) -> str:
    """The start of a rejected item's JSON, for its rejection row ("" if it cannot be written:
    an item too deep or holding what JSON cannot)."""
    try:
        return json.dumps(item, ensure_ascii=False)[:RAW_FRAGMENT].encode("utf-8").decode()
    except (ValueError, RecursionError):
        return ""


def rejection(source: str, file: str, line: int, exc: JsonRejected | Exception,
              raw: str = "") -> dict:
    """One line of ``import_rejections/<date>/*.jsonl`` (read into ``rejected_inputs``)."""
    if isinstance(exc, JsonRejected):
        field, reason, detail = exc.field, exc.reason, exc.detail
    else:
        field, reason, detail = "", "unknown_shape", f"{type(exc).__name__}: {exc}"
    return {"source": source, "file": file, "line": line, "field": field, "reason": reason,
            "detail": detail[:500], "raw": raw[:RAW_FRAGMENT]}


def write_rejections(out: Path, date: str, name: str, rows: list[dict]) -> Path | None:
    """``import_rejections/<date>/<name>.jsonl`` (atomic), and ``answers/<date>/`` so that
    ``citeaudit run`` finds the date even when every item was rejected; None if no rows."""
    if not rows:
        return None
    path = out / REJECTIONS_DIR / date / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    os.replace(tmp, path)
    (out / "answers" / date).mkdir(parents=True, exist_ok=True)
    return path
