"""Two streaming WARC/ARC readers with one interface, for :mod:`citeaudit.archive.index.files`.

Both readers turn a file into a sequence of :class:`Slot` objects, one per record (or per
unreadable stretch of bytes). A slot carries the record's offset, its WARC headers and a
``block`` stream over the record's content. The consumer reads (part of) the block while it
holds the slot; when it asks for the next slot, the reader finishes the previous record:
it drains what the consumer left, works out the record's ``length`` (exactly as pywb and
cdxj-indexer do) and attaches framing problems (``errors``, ``truncated``). A slot is
final once ``closed`` is true; for gzip files that can be later than the next slot, since
the length of a record is only known when its gzip member ends.

* :func:`warcio_slots` is built from warcio's own parts (``DecompressingBufferedReader`` and
  ``ArcWarcRecordLoader``: the ones pywb and cdxj-indexer use) but drives them itself, so
  that a bad record or a bad gzip layout becomes a slot with an error instead of ending the
  file: whole-file gzip, records that straddle gzip members, truncation, wrong
  Content-Length, garbage between records. It reads WARC and ARC.
* :func:`fastwarc_slots` uses FastWARC's C++ iterator (its bare read loop is ~2x warcio's),
  for WARC files only.
  It accepts a file only if every record passes framing checks that prove the offsets and
  lengths are the ones warcio would report (see :func:`fastwarc_slots`); otherwise it raises
  :class:`FastwarcRefused` and the caller falls back to warcio. So both readers give the
  same rows for any file that fastwarc accepts.

Memory stays flat: lines are read with a cap, blocks are streamed in 64 KiB pieces.

The code lives in :mod:`.slots` (the shared :class:`Slot` and framing basics),
:mod:`.warcio_reader`, :mod:`.fastwarc_reader` and :mod:`.gzip_cuts` (cut points for splitting
a ``.warc.gz``); this module gathers their names so the room's modules import from one place.
"""

from __future__ import annotations

from citeaudit.archive.index.fastwarc_reader import fastwarc_slots as fastwarc_slots
from citeaudit.archive.index.gzip_cuts import CUT_SCAN_BUDGET as CUT_SCAN_BUDGET
from citeaudit.archive.index.gzip_cuts import GZIP_MEMBER_MAGIC as GZIP_MEMBER_MAGIC
from citeaudit.archive.index.gzip_cuts import gzip_record_cuts as gzip_record_cuts
from citeaudit.archive.index.slots import BLOCK_SIZE as BLOCK_SIZE
from citeaudit.archive.index.slots import MAX_BLANK_SLACK as MAX_BLANK_SLACK
from citeaudit.archive.index.slots import MAX_INFLATE as MAX_INFLATE
from citeaudit.archive.index.slots import MAX_LINE as MAX_LINE
from citeaudit.archive.index.slots import WARC_VERSIONS as WARC_VERSIONS
from citeaudit.archive.index.slots import FastwarcRefused as FastwarcRefused
from citeaudit.archive.index.slots import Slot as Slot
from citeaudit.archive.index.slots import sniff_compression as sniff_compression
from citeaudit.archive.index.warcio_reader import warcio_slots as warcio_slots
