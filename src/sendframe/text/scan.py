"""One pass over the UTF-8 bytes of a text array: units in every encoding and character flags.

Every character is classified once through a lookup table (:data:`CLASS_TABLE`, one byte of
flags per Basic Multilingual Plane code point; characters beyond it are surrogate pairs), and
the flags are folded per value. One pass gives what would otherwise take a regex pass per
encoding and per question (which characters are foreign, which cost two units).

    >>> stats = scan_text(pa.array(["Olá", "5€", "😀", None]))
    >>> stats.units.tolist()
    [[3, 3, 1, 0], [4, 3, 1, 0], [3, 2, 2, 0]]
    >>> [encoding_rank(f) for f in stats.flags.tolist()]
    [1, 0, 2, 0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.text._arrow import TEXT
from sendframe.text.encodings import CHARSETS, DOUBLE_CHARS

FOREIGN_GSM, FOREIGN_PT, DOUBLE_GSM, DOUBLE_PT, ASTRAL = 1, 2, 4, 8, 16
#: per encoding (in :data:`~sendframe.text.encodings.ENCODINGS` order): the flag of a character it cannot carry,
#: of a 2-unit one
FOREIGN_FLAG: tuple[int, ...] = (FOREIGN_GSM, FOREIGN_PT, 0)
DOUBLE_FLAG: tuple[int, ...] = (DOUBLE_GSM, DOUBLE_PT, ASTRAL)


def _class_table() -> np.ndarray:
    table = np.full(0x10000, FOREIGN_GSM | FOREIGN_PT, dtype=np.uint8)
    for flag, name in ((FOREIGN_GSM, "gsm"), (FOREIGN_PT, "gsm-pt")):
        table[[ord(c) for c in CHARSETS[name]]] &= ~flag & 0xFF
    table[[ord(c) for c in DOUBLE_CHARS["gsm"]]] |= DOUBLE_GSM
    table[[ord(c) for c in DOUBLE_CHARS["gsm-pt"]]] |= DOUBLE_PT
    return table


CLASS_TABLE = _class_table()
_ASTRAL_CLASS = FOREIGN_GSM | FOREIGN_PT | ASTRAL
# Class of a byte read alone: ASCII bytes are whole characters; other bytes are resolved below.
_BYTE_TABLE = np.concatenate([CLASS_TABLE[:0x80], np.zeros(0x80, dtype=np.uint8)])


@dataclass(frozen=True)
class TextStats:
    """Per value: ``units`` (one row per encoding, :data:`~sendframe.text.encodings.ENCODINGS` order), OR-ed character
    ``flags`` and ``missing`` (null values have 0 units and no flags)."""

    units: np.ndarray  # (3, n) int64
    flags: np.ndarray  # (n,) uint8
    missing: np.ndarray  # (n,) bool


def _char_classes(body: np.ndarray) -> np.ndarray:
    """The class of every character, written at its first byte (0 on continuation bytes)."""
    classes: np.ndarray = _BYTE_TABLE[body]
    leads = np.flatnonzero(body >= 0xC0)
    if len(leads):
        b0 = body[leads].astype(np.int64)
        b1 = body[leads + 1].astype(np.int64) & 0x3F
        two, three = b0 < 0xE0, (b0 >= 0xE0) & (b0 < 0xF0)
        code = np.where(two, ((b0 & 0x1F) << 6) | b1, 0)
        at3 = leads[three]
        code[three] = ((b0[three] & 0x0F) << 12) | (b1[three] << 6) | (body[at3 + 2].astype(np.int64) & 0x3F)
        classes[leads] = np.where(b0 >= 0xF0, _ASTRAL_CLASS, CLASS_TABLE[code])
    return classes


def scan_text(arr: pa.Array) -> TextStats:
    """Units per encoding, character flags and missing mask of every value of a text array."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(TEXT)
    n = len(arr)
    missing = arr.is_null().to_numpy(zero_copy_only=False)
    chars = pc.utf8_length(arr).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    flags = np.zeros(n, dtype=np.uint8)
    extra = np.zeros((3, n), dtype=np.int64)
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[arr.offset : arr.offset + n + 1] if n else np.zeros(1, np.int64)
    if buffers[2] is not None and offsets[-1] > offsets[0]:
        body = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
        classes = np.append(_char_classes(body), np.uint8(0))  # the 0 closes empty values at the end
        starts, filled = offsets[:-1] - offsets[0], offsets[1:] > offsets[:-1]
        # per value, folded over its bytes (reduceat gives an empty value its next byte: hence ``filled``)
        flags = np.where(filled, np.bitwise_or.reduceat(classes, starts), 0).astype(np.uint8)
        for i, bit in enumerate(DOUBLE_FLAG):  # 2-unit characters
            if (flags & bit).any():
                extra[i] = np.where(filled, np.add.reduceat((classes & bit) != 0, starts, dtype=np.int64), 0)
    return TextStats(chars + extra, flags, missing)


@overload
def encoding_rank(flags: int) -> int: ...
@overload
def encoding_rank(flags: np.ndarray) -> np.ndarray: ...
def encoding_rank(flags: np.ndarray | int) -> np.ndarray | int:
    """Index in :data:`~sendframe.text.encodings.ENCODINGS` of the cheapest encoding for these flags
    (0 gsm, 1 gsm-pt, 2 utf-16).

    >>> encoding_rank(np.array([0, FOREIGN_GSM, FOREIGN_GSM | FOREIGN_PT])).tolist()
    [0, 1, 2]
    """
    flags = np.asarray(flags)
    rank = np.where(flags & FOREIGN_GSM, np.where(flags & FOREIGN_PT, 2, 1), 0).astype(np.int8)
    return rank if rank.ndim else int(rank)


__all__ = ["TextStats", "encoding_rank", "scan_text"]
