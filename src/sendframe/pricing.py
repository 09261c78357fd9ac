"""The price table: one source for the sandbox's costs and the toolkit's estimates.

``sendframe/data/prices.csv`` (package data: an installed wheel has it) has one row per (prefix,
channel): ``prefix`` (calling-code digits, possibly longer, e.g. Canadian area codes ``1416``; ``*``
is the default row), ``country`` (ISO 3166 alpha-2, ``ZZ`` for the default), ``channel``,
``unit_price``, ``certified_surcharge``, ``attachment_surcharge`` and ``currency``. A number pays
the row of the longest prefix it starts with, or the default row.

What is charged (docs/api-notes.md, "Prices"): SMS and landing SMS ``unit_price`` per part; email
per message plus ``attachment_surcharge`` per attachment; voice and voice audio per *answered*
call (retries are free); WhatsApp per message. ``certified`` adds ``certified_surcharge`` once
per message.

    >>> prices = load_prices()
    >>> prices.unit_price("34600123456", "sms"), prices.unit_price("14165550123", "sms")
    (0.045, 0.0095)
    >>> prices.message_cost("34600123456", "sms", parts=3, certified=True)
    0.165
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.channels import CHANNEL_INFO, CHANNELS
from sendframe.errors import ConfigurationError

__all__ = ["CHANNELS", "COLUMNS", "DEFAULT_PREFIX", "DEFAULT_PRICES_PATH", "PriceTable", "load_prices", "message_cost"]

# package data read through importlib.resources, so an installed wheel prices outside the checkout too
DEFAULT_PRICES_PATH: Traversable = resources.files("sendframe").joinpath("data").joinpath("prices.csv")
DEFAULT_PREFIX = "*"
COLUMNS = ("prefix", "country", "channel", "unit_price", "certified_surcharge", "attachment_surcharge", "currency")
PER_PART_CHANNELS = frozenset(name for name, info in CHANNEL_INFO.items() if info.billed_per_part)
PER_ANSWERED_CALL_CHANNELS = frozenset(name for name, info in CHANNEL_INFO.items() if info.billed_per_answered_call)
_MONEY = ("unit_price", "certified_surcharge", "attachment_surcharge")
_LOOKUP_COLUMNS = ["prefix", "country", "unit_price", "certified_surcharge", "attachment_surcharge", "currency"]
_Amount = float | np.ndarray  # one message's money, or every row's
_DENSE_DIGITS = 5  # prefixes of up to this many digits are matched through one table of (width + 1) * 10**width rows


class PriceTable:
    """Prices by (prefix, channel) with longest-prefix lookup; build it with :func:`load_prices`."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = _checked(frame)
        self._by_channel: dict[str, pd.DataFrame] = {}
        self._lengths: dict[str, list[int]] = {}
        self._money: dict[str, dict[str, tuple[float, float, float]]] = {}  # scalar lookups without pandas
        for channel, rows in self._frame.groupby("channel", sort=False):
            rows = rows.set_index("prefix", drop=False)
            self._by_channel[str(channel)] = rows
            self._lengths[str(channel)] = sorted({len(p) for p in rows.index if p != DEFAULT_PREFIX}, reverse=True)
            money = zip(rows["prefix"].astype("str").tolist(), *(rows[c].to_numpy(dtype="float64") for c in _MONEY),
                        strict=True)
            self._money[str(channel)] = {prefix: (float(unit), float(certified), float(attachment))
                                         for prefix, unit, certified, attachment in money}
        # vectorised lookups: a number's row is a position in ``self._by_channel[channel]``. Prefixes of up to
        # ``_DENSE_DIGITS`` digits are answered by one table: for a number whose first digits (at most
        # ``width``) are d1..dl, right-padded with zeros to ``width`` digits as the integer c, the row is
        # ``table[l * 10**width + c]``; longer prefixes (none in the shipped table) by pyarrow's index_in.
        self._dense: dict[str, tuple[int, np.ndarray]] = {}
        self._long: dict[str, list[tuple[int, pa.Array, np.ndarray]]] = {}
        self._money_arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for channel, rows in self._by_channel.items():
            prefixes = rows["prefix"].astype("str").tolist()
            self._dense[channel] = _dense_table(prefixes, self._lengths[channel])
            self._long[channel] = [
                (size, pa.array([p for p in prefixes if len(p) == size], type=pa.large_string()),
                 np.asarray([i for i, p in enumerate(prefixes) if len(p) == size], dtype=np.intp))
                for size in sorted(self._lengths[channel]) if size > _DENSE_DIGITS
            ]
            self._money_arrays[channel] = tuple(rows[c].to_numpy(dtype="float64") for c in _MONEY)  # type: ignore[assignment]

    def __repr__(self) -> str:
        countries = self._frame["country"].nunique()
        return f"PriceTable({len(self._frame)} rows, {countries} countries, channels {', '.join(self.channels)})"

    @property
    def frame(self) -> pd.DataFrame:
        """A copy of the table's rows."""
        return self._frame.copy()

    @property
    def channels(self) -> tuple[str, ...]:
        """The channels the table prices."""
        return tuple(self._by_channel)

    def _rows(self, channel: str) -> pd.DataFrame:
        try:
            return self._by_channel[channel]
        except KeyError:
            raise ConfigurationError(f"The price table has no prices for channel {channel!r}; "
                                     f"it prices {', '.join(self.channels)}.") from None

    def prefix_of(self, number_or_prefix: object, channel: str) -> str:
        """The prefix of the row that prices ``number_or_prefix`` on ``channel`` (``*`` for the default).

            >>> load_prices().prefix_of("14165550123", "sms"), load_prices().prefix_of("999", "sms")
            ('1416', '*')
        """
        self._rows(channel)
        money = self._money[channel]
        text = str(number_or_prefix).lstrip("+") if isinstance(number_or_prefix, (str, int)) else ""
        if text.isascii() and text.isdigit():
            for size in self._lengths[channel]:
                if text[:size] in money:
                    return text[:size]
        return DEFAULT_PREFIX

    def unit_price(self, number_or_prefix: object, channel: str) -> float:
        """The unit price for a number (or prefix) on ``channel``: per part for SMS, per message or answered call
        otherwise.

            >>> load_prices().unit_price("447700900123", "whatsapp")
            0.04
        """
        prefix = self.prefix_of(number_or_prefix, channel)
        return self._money[channel][prefix][0]

    def lookup(self, numbers: pd.Series, channel: str) -> pd.DataFrame:
        """The price row of every number, vectorised: prefix, country, unit_price, certified_surcharge,
        attachment_surcharge, currency, on the numbers' index: the row :meth:`prefix_of` picks (leading ``+`` dropped);
        missing or non-digit values get the default row.

            >>> found = load_prices().lookup(pd.Series(["351912345678", None]), "sms")
            >>> found[["country", "unit_price"]].values.tolist()
            [['PT', 0.039], ['ZZ', 0.09]]
        """
        rows = self._rows(channel)
        index, positions = self._positions(numbers, channel)
        columns = {column: rows[column].array.take(positions) for column in _LOOKUP_COLUMNS}
        return pd.DataFrame(columns, index=index, copy=False)

    def _positions(self, numbers: pd.Series, channel: str) -> tuple[pd.Index, np.ndarray]:
        # the numbers' index and, for every number, the position of its row in self._by_channel[channel]:
        # what prefix_of answers (leading "+" dropped; only all-ASCII-digit values match; else the default row)
        self._rows(channel)
        text = pd.Series(numbers, copy=False).astype("str")
        width, table = self._dense[channel]
        if not len(text) or not width:
            return text.index, np.full(len(text), table[0], dtype=np.intp)
        strings = _arrow_strings(text)
        for attempt in range(2):
            offsets, data = _buffers(strings)
            if not len(data):  # only empty strings and missing values
                return text.index, np.full(len(text), table[0], dtype=np.intp)
            starts, sizes, last = offsets[:-1], offsets[1:] - offsets[:-1], len(data) - 1
            first = data[np.minimum(starts, last)]
            if attempt or not ((first == ord("+")) & (sizes > 0)).any():
                break
            strings = pc.utf8_ltrim(strings, characters="+")
        digits = pc.fill_null(pc.ascii_is_decimal(strings), False).to_numpy(zero_copy_only=False)
        used = np.where(digits, np.minimum(sizes, width), 0).astype(np.int32)  # digits that count: 0 for non-numbers
        code = used * np.int32(10**width)
        scale = 10 ** (width - 1)
        for step in range(width):
            byte = first if step == 0 else data[np.minimum(starts + step, last)]
            code += (byte.astype(np.int32) - ord("0")) * (used > step) * np.int32(scale)
            scale //= 10
        positions = table[code]
        for size, known, rows_of in self._long[channel]:  # longer prefixes win over shorter ones
            found = pc.fill_null(pc.index_in(pc.utf8_slice_codeunits(strings, 0, size), value_set=known), -1)
            found = found.to_numpy(zero_copy_only=False)
            hit = digits & (sizes >= size) & (found >= 0)
            positions = np.where(hit, rows_of[np.maximum(found, 0)], positions)
        return text.index, positions

    def unit_prices(self, numbers: pd.Series, channel: str) -> pd.Series:
        """:meth:`unit_price` of every number, vectorised (float64 on the numbers' index).

            >>> load_prices().unit_prices(pd.Series(["34600123456", "5511987654321"]), "sms").tolist()
            [0.045, 0.028]
        """
        index, positions = self._positions(numbers, channel)
        return pd.Series(self._money_arrays[channel][0][positions], index=index, name="unit_price", dtype="float64")

    def message_cost(self, number: object, channel: str, *, parts: int = 1, certified: bool = False,
                     attachments: int = 0, answered: bool = True) -> float:
        """What one message costs (rounded to 4 decimals); see the module docstring for what is charged.

            >>> load_prices().message_cost("x@example.com", "mailing", attachments=2, certified=True)
            0.012
            >>> load_prices().message_cost("34600123456", "voice", answered=False)
            0.0
        """
        unit, certified_surcharge, attachment_surcharge = self._money[channel][self.prefix_of(number, channel)]
        return float(_cost(channel, unit, certified_surcharge, attachment_surcharge, parts, certified, attachments,
                           answered))

    def costs(self, numbers: pd.Series, channel: str, *, parts: int | pd.Series = 1, certified: bool = False,
              attachments: int = 0, answered: bool | pd.Series = True) -> pd.Series:
        """:meth:`message_cost` of every number, vectorised; ``parts`` and ``answered`` may be Series on the same index.

            >>> load_prices().costs(pd.Series(["34600123456", "351912345678"]), "sms", parts=pd.Series([1, 2])).tolist()
            [0.045, 0.078]
        """
        index, positions = self._positions(numbers, channel)
        unit, certified_surcharge, attachment_surcharge = (values[positions] for values in self._money_arrays[channel])
        parts_values = parts.to_numpy(dtype="float64") if isinstance(parts, pd.Series) else parts
        answered_values = answered.to_numpy(dtype=bool) if isinstance(answered, pd.Series) else answered
        cost = _cost(channel, unit, certified_surcharge, attachment_surcharge, parts_values, certified, attachments,
                     answered_values)
        return pd.Series(cost, index=index, name="cost", dtype="float64")


def _cost(channel: str, unit: _Amount, certified_surcharge: _Amount, attachment_surcharge: _Amount,
          parts: int | np.ndarray, certified: bool, attachments: int, answered: bool | np.ndarray) -> _Amount:
    # works on scalars and numpy arrays alike
    cost: _Amount = unit * parts if channel in PER_PART_CHANNELS else unit * 1.0
    if certified:
        cost = cost + certified_surcharge
    if attachments:
        cost = cost + attachment_surcharge * attachments
    if channel in PER_ANSWERED_CALL_CHANNELS:
        if isinstance(cost, np.ndarray) or isinstance(answered, np.ndarray):
            cost = np.where(answered, cost, 0.0)
        elif not answered:
            cost = 0.0
    return np.round(cost, 4) if isinstance(cost, np.ndarray) else round(float(cost), 4)


def _dense_table(prefixes: list[str], lengths: list[int]) -> tuple[int, np.ndarray]:
    # (width, table) for PriceTable._positions: table[l * 10**width + c] is the position in ``prefixes`` of
    # the longest prefix (of at most width digits) of an l-digit number whose digits, right-padded with zeros
    # to width digits, read c; the default row's position where none matches (and for l = 0)
    width = min(max(lengths, default=0), _DENSE_DIGITS)
    default = prefixes.index(DEFAULT_PREFIX)
    table = np.full((width + 1, 10**width), default, dtype=np.intp)
    codes = np.arange(10**width)
    for size in range(1, width + 1):  # shortest first: a longer match overwrites a shorter one
        known = np.full(10**size, -1, dtype=np.intp)
        for position, prefix in enumerate(prefixes):
            if len(prefix) == size and prefix != DEFAULT_PREFIX:
                known[int(prefix)] = position
        found = known[codes // 10 ** (width - size)]
        table[size:] = np.where(found >= 0, found, table[size:])
    return width, table.reshape(-1)


def _arrow_strings(text: pd.Series) -> pa.Array:
    # the values of a str Series as one pyarrow (large_)string array, without copying when pandas stores them in arrow
    try:
        strings = text.array.__arrow_array__()
    except (AttributeError, TypeError, NotImplementedError, pa.ArrowException):
        strings = pa.array(text, type=pa.large_string(), from_pandas=True)
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.chunk(0) if strings.num_chunks == 1 else strings.combine_chunks()
    if not (pa.types.is_string(strings.type) or pa.types.is_large_string(strings.type)):
        strings = strings.cast(pa.large_string())
    return strings


def _buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    # the offsets (one more than the values) and the UTF-8 bytes of a (large_)string array, zero-copy
    _, offsets, data = strings.buffers()
    kind = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    offsets = np.frombuffer(offsets, dtype=kind)[strings.offset:strings.offset + len(strings) + 1].astype(np.int64)
    return offsets, (np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8))


def _checked(frame: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ConfigurationError(f"The price table lacks the column(s) {', '.join(missing)}; "
                                 f"it needs {', '.join(COLUMNS)}.")
    frame = frame.loc[:, list(COLUMNS)].copy()
    for column in ("prefix", "country", "channel", "currency"):
        frame[column] = frame[column].astype("str").str.strip()
    problems = []
    rows = zip(frame["prefix"].tolist(), frame["channel"].tolist(), strict=True)
    for line, (prefix, channel) in enumerate(rows, start=2):  # line 1 is the header
        if not (prefix == DEFAULT_PREFIX or (prefix.isascii() and prefix.isdigit())):
            problems.append(f"line {line}: prefix must be digits or '*' (got {prefix!r})")
        if channel not in CHANNELS:
            problems.append(f"line {line}: channel must be one of {', '.join(CHANNELS)} (got {channel!r})")
    for column in _MONEY:
        values = pd.to_numeric(frame[column], errors="coerce")
        for position in np.flatnonzero((values.isna() | (values < 0)).to_numpy(dtype=bool)):
            problems.append(f"line {position + 2}: {column} must be a number of at least 0 "
                            f"(got {frame[column].iloc[position]!r})")
        frame[column] = values.astype("float64")
    duplicated = frame.duplicated(["prefix", "channel"], keep="first")
    for position in np.flatnonzero(duplicated.to_numpy()):
        prefix, channel = frame["prefix"].iloc[position], frame["channel"].iloc[position]
        problems.append(f"line {position + 2}: a second row for prefix {prefix} and channel {channel}")
    for channel in frame["channel"].unique():
        if not ((frame["channel"] == channel) & (frame["prefix"] == DEFAULT_PREFIX)).any():
            problems.append(f"channel {channel}: no default row (prefix '*')")
    if problems:
        raise ConfigurationError("The price table is not valid:\n  - " + "\n  - ".join(problems[:20]))
    return frame.reset_index(drop=True)


@lru_cache(maxsize=8)
def _load(path: Path | None) -> PriceTable:
    source: Traversable = DEFAULT_PRICES_PATH if path is None else path
    try:
        with source.open("rb") as handle:
            frame = pd.read_csv(handle, dtype={"prefix": "str", "country": "str", "channel": "str", "currency": "str"},
                                keep_default_na=False)  # "NA" is Namibia, not a missing value
    except FileNotFoundError:
        raise ConfigurationError(f"No price table at {source}; pass the path of a prices.csv.") from None
    return PriceTable(frame)


def load_prices(path: str | Path | None = None) -> PriceTable:
    """Read a price table (default: the one shipped in the package, ``sendframe/data/prices.csv``); each file is
    read once.

        >>> load_prices().unit_price("5215512345678", "sms")
        0.035
    """
    return _load(Path(path).resolve() if path is not None else None)


def message_cost(number: object, channel: str, *, parts: int = 1, certified: bool = False, attachments: int = 0,
                 answered: bool = True, prices: PriceTable | None = None) -> float:
    """What one message to ``number`` costs on ``channel`` with the default (or given) price table.

        >>> message_cost("34600123456", "sms", parts=2)
        0.09
    """
    return (prices or load_prices()).message_cost(number, channel, parts=parts, certified=certified,
                                                  attachments=attachments, answered=answered)
