"""WARC dates: parsing ``WARC-Date`` into an aware UTC datetime and a 14-digit timestamp.

Why here: the date rules (W3C-DTF with optional fraction and zone, zone-less means UTC,
impossible dates give None) are independent of how records are read, and ``capture_time``
and ``timestamp`` of every row come from them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_RE_DATE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?"
    r"\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$"
)


_DATE_CACHE: dict[str, tuple[datetime | None, str | None]] = {}


def capture_time_of(value: str | None) -> tuple[datetime | None, str | None]:
    """``(capture_time, 14-digit timestamp)`` of a WARC-Date, memoised (dates repeat)."""
    if value is None:
        return None, None
    hit = _DATE_CACHE.get(value)
    if hit is None:
        hit = _canonical_time(value)
    if hit is None:
        when = parse_warc_date(value)
        hit = (when, when.strftime("%Y%m%d%H%M%S") if when else None)
        if len(_DATE_CACHE) >= 10_000:
            _DATE_CACHE.clear()
        _DATE_CACHE[value] = hit
    return hit


def _canonical_time(value: str) -> tuple[datetime, str] | None:
    """The common ``YYYY-MM-DDTHH:MM:SSZ`` spelling, parsed without the regex (else None)."""
    if len(value) != 20 or value[19] != "Z" or value[10] != "T" or value[0] == "0":
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    stamp = value[:4] + value[5:7] + value[8:10] + value[11:13] + value[14:16] + value[17:19]
    return (when, stamp) if stamp.isascii() and stamp.isdigit() else None


def parse_warc_date(value: str | None) -> datetime | None:
    """Parse a WARC-Date (W3C-DTF, optional fraction and zone) into an aware UTC datetime.

    Returns None for a missing or impossible date (ClueWeb's ``2008-10-294T05:21:46-0700``).
    A date without a zone is taken as UTC, as pywb does.
    """
    if not value:
        return None
    match = _RE_DATE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, frac, zone = match.groups()
    try:
        micro = int((frac or "0")[:6].ljust(6, "0"))
        moment = datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0),
            int(second or 0), micro, tzinfo=UTC,
        )
    except ValueError:
        return None
    if zone and zone not in ("Z", "z"):
        digits = zone[1:].replace(":", "")
        shift = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        try:
            moment = moment.replace(tzinfo=timezone(shift if zone[0] == "+" else -shift))
        except ValueError:
            return None
        moment = moment.astimezone(UTC)
    return moment
