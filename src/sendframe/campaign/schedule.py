"""Send at each recipient's local time: which zone, which UTC instant, which rows go together.

Pure functions, no I/O. The time zone of a row, in this order:

1. the ``timezone`` column when the row has a value there (source ``"column"``);
2. phonenumbers' time-zone metadata for the number. When it names one zone for the number
   (``+1 212 ...``: America/New_York) that is the zone (source ``"number"``). When the number's
   whole country has one zone, that one (source ``"country"``). When several zones remain (a
   mobile in Spain: Madrid or the Canaries; US toll-free; an Australian mobile) or phonenumbers
   does not know the number, :data:`PREFERRED_ZONES` decides: the first zone of the calling code's
   list, most populous first, that is among the candidates, else the first candidate
   phonenumbers lists (source ``"country default"``);
3. ``default_timezone`` when given (source ``"default"``); otherwise the row has no zone and no
   send time (source ``"unknown"``).

phonenumbers places a number by its prefix only when it is valid and of a geographic type (fixed
line; mobiles too in the few countries whose mobiles are geographic). That type is looked up once
per numbering block (calling code, first six national digits, length), not per number: numbering
plans allocate types by such blocks, and it makes a million numbers a few seconds' work.

The send time is the next ``local_time`` at or after ``now`` in the row's zone (or on ``date``),
DST-aware (zoneinfo): a wall time skipped by a spring-forward change moves forward by the gap
(02:30 becomes 03:30), a repeated one (autumn) is its first occurrence. ``quiet_hours=(start, end)``
allows sends only from ``start`` to before ``end`` local time; a send outside that window moves to
the next ``start``. Everything is computed once per distinct zone, not per row.

    >>> import pandas as pd
    >>> contacts = pd.DataFrame({"phone": ["34912345678", "12125550123"]})
    >>> plan = local_send_times(contacts, "10:00", now=pd.Timestamp("2026-03-28 12:00", tz="UTC"))
    >>> plan[["timezone", "local_send_at", "timezone_source"]].to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'timezone': ['Europe/Madrid', 'America/New_York'],
     'local_send_at': ['2026-03-29 10:00:00+02:00', '2026-03-28 10:00:00-04:00'],
     'timezone_source': ['number', 'number']}
"""

from __future__ import annotations

import contextlib
import functools
import re
from datetime import UTC, datetime, time, timedelta
from datetime import date as Date
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd
from phonenumbers import (
    PhoneNumber,
    PhoneNumberType,
    is_number_type_geographical,
    number_type,
)
from phonenumbers import timezone as phone_zones

from sendframe.api.recipient_columns import normalise_phones
from sendframe.api.recipients import calling_code
from sendframe.campaign.caps import aware_moment
from sendframe.campaign.columns import find_recipient_column, recipient_column
from sendframe.campaign.tables import as_frame
from sendframe.errors import InputError
from sendframe.options import keyword_checked

__all__ = ["PREFERRED_ZONES", "local_send_times", "zone_of_number", "zones_of_numbers"]

# calling code -> its zones, most populous first: how a number that phonenumbers cannot place in one
# zone gets one (docs/api-notes.md, "Send at local time"). Codes phonenumbers maps to several zones.
PREFERRED_ZONES: dict[str, tuple[str, ...]] = {
    "1": ("America/New_York", "America/Chicago", "America/Los_Angeles", "America/Toronto", "America/Denver",
          "America/Phoenix", "America/Vancouver", "America/Edmonton", "America/Winnipeg", "America/Halifax",
          "America/Regina", "America/St_Johns", "America/Anchorage", "Pacific/Honolulu", "America/Puerto_Rico",
          "America/Santo_Domingo", "America/Jamaica", "America/Port_of_Spain", "America/Boise", "America/Juneau",
          "America/Adak"),
    "7": ("Europe/Moscow", "Asia/Yekaterinburg", "Asia/Novosibirsk", "Europe/Samara", "Asia/Almaty",
          "Asia/Krasnoyarsk", "Asia/Omsk", "Asia/Irkutsk", "Asia/Vladivostok", "Asia/Aqtobe", "Asia/Yakutsk",
          "Asia/Sakhalin", "Asia/Magadan", "Asia/Kamchatka", "Asia/Anadyr"),
    "34": ("Europe/Madrid", "Atlantic/Canary"),
    "351": ("Europe/Lisbon", "Atlantic/Azores"),
    "353": ("Europe/Dublin", "Europe/London"),
    "358": ("Europe/Helsinki", "Europe/Mariehamn"),
    "39": ("Europe/Rome", "Europe/Vatican"),
    "44": ("Europe/London", "Europe/Jersey", "Europe/Guernsey", "Europe/Isle_of_Man"),
    "47": ("Europe/Oslo", "Arctic/Longyearbyen"),
    "52": ("America/Mexico_City", "America/Tijuana", "America/Mazatlan", "America/Cancun", "America/Ciudad_Juarez",
           "America/Matamoros", "America/Ojinaga"),
    "55": ("America/Sao_Paulo", "America/Manaus", "America/Rio_Branco", "America/Noronha"),
    "61": ("Australia/Sydney", "Australia/Brisbane", "Australia/Perth", "Australia/Adelaide", "Australia/Eucla",
           "Australia/Lord_Howe"),
    "62": ("Asia/Jakarta", "Asia/Makassar", "Asia/Jayapura"),
    "64": ("Pacific/Auckland", "Pacific/Chatham"),
    "243": ("Africa/Kinshasa", "Africa/Lubumbashi"),
    "262": ("Indian/Reunion", "Indian/Mayotte"),
    "299": ("America/Godthab", "America/Thule", "America/Scoresbysund"),
    "593": ("America/Guayaquil", "Pacific/Galapagos"),
    "599": ("America/Curacao", "America/Kralendijk"),
    "686": ("Pacific/Tarawa", "Pacific/Kiritimati", "Pacific/Enderbury"),
    "689": ("Pacific/Tahiti", "Pacific/Marquesas", "Pacific/Gambier"),
    "691": ("Pacific/Truk", "Pacific/Ponape", "Pacific/Kosrae"),
    "976": ("Asia/Ulaanbaatar", "Asia/Hovd", "Asia/Choibalsan"),
}

_UNKNOWN_ZONE = "Etc/Unknown"  # phonenumbers' answer for a number it cannot place
# phonenumbers' prefix -> zones table (the one time_zones_for_number reads); its stubs do not declare it
_ZONE_DATA: dict[str, tuple[str, ...]] = phone_zones.TIMEZONE_DATA  # type: ignore[attr-defined]
_LONGEST_PREFIX: int = phone_zones.TIMEZONE_LONGEST_PREFIX  # type: ignore[attr-defined]
_TIME_OF_DAY = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")


@functools.lru_cache(maxsize=4096)
def _longest_prefix_zones(digits: str) -> tuple[str, ...]:
    """The zones of the longest prefix of ``digits`` in phonenumbers' table (what it does for a geographic number)."""
    for size in range(min(_LONGEST_PREFIX, len(digits)), 0, -1):
        zones = _ZONE_DATA.get(digits[:size])
        if zones is not None:
            return tuple(zones)
    return (_UNKNOWN_ZONE,)


def _is_geographic(code: str, national: str) -> bool:
    """Whether phonenumbers places the number by its prefix: valid, and of a geographic type (fixed line, ...).

    The number is taken as written: calling code, then national digits (leading zeros kept, as
    phonenumbers keeps an Italian one). Built directly rather than parsed: parsing costs twice as much.
    """
    zeros = len(national) - len(national.lstrip("0"))
    numobj = PhoneNumber(country_code=int(code), national_number=int(national or "0"),
                         italian_leading_zero=True if zeros else None,
                         number_of_leading_zeros=zeros if zeros > 1 else None)
    kind = number_type(numobj)
    return kind != PhoneNumberType.UNKNOWN and is_number_type_geographical(kind, int(code))


def zone_of_number(number: str) -> tuple[str, str] | None:
    """(time zone, source) of a phone number in API form, by the rule of the module docstring; None if unknown.

        >>> zone_of_number("12125550123"), zone_of_number("18005550123")
        (('America/New_York', 'number'), ('America/New_York', 'country default'))
        >>> zone_of_number("34600123456"), zone_of_number("4915123456789")
        (('Europe/Madrid', 'country default'), ('Europe/Berlin', 'country'))
    """
    code = calling_code(number)
    country = _longest_prefix_zones(code)
    if country == (_UNKNOWN_ZONE,):  # no calling code (""), or one phonenumbers has no zone for
        return None
    own = _longest_prefix_zones(number[:_LONGEST_PREFIX])
    if own != country and not _is_geographic(code, number[len(code):]):
        own = country  # phonenumbers uses the prefix only for a valid number of a geographic type
    candidates = country if own == (_UNKNOWN_ZONE,) else own
    if len(candidates) == 1:
        return candidates[0], "country" if candidates == country else "number"
    preferred = (zone for zone in PREFERRED_ZONES.get(code, ()) if zone in candidates)
    return next(preferred, candidates[0]), "country default"


@functools.lru_cache(maxsize=512)
def _block_length(code: str) -> int:
    """How many leading digits decide the zone of a number with this calling code.

    The six national digits of a numbering block (its type, see :func:`zone_of_number`), or the
    longest prefix phonenumbers' time-zone table has for the code, whichever is longer.
    """
    longest = max((len(prefix) for prefix in _ZONE_DATA if prefix.startswith(code)), default=0)
    return max(len(code) + 6, longest)


def zones_of_numbers(numbers: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(zone, source) arrays of :func:`zone_of_number` for a Series of numbers in API form (None: unknown).

    Numbers that share their leading digits up to :func:`_block_length` and their length share
    their answer, so the rule runs once per such block, not per number.

        >>> zones_of_numbers(pd.Series(["12125550123", None, "12125550199"]))[0].tolist()
        ['America/New_York', None, 'America/New_York']
    """
    text = numbers.astype("string")
    head_codes, heads = pd.factorize(text.str[:3], use_na_sentinel=True)  # the first three digits hold the code
    block = np.asarray([_block_length(code) if (code := calling_code(head)) else 0 for head in heads] + [0])[head_codes]
    keys = pd.Series(pd.NA, index=numbers.index, dtype="string")  # missing: no calling code
    for size in np.unique(block[block > 0]):
        chosen = block == size
        keys[chosen] = text[chosen].str[:size] + ":" + text[chosen].str.len().astype("string")
    key_codes, _ = pd.factorize(keys, use_na_sentinel=True)  # counting up in order of first appearance
    first = np.flatnonzero((keys.notna() & ~keys.duplicated()).to_numpy())  # block k's first number answers for it
    answers = [zone_of_number(str(text.iat[at])) for at in first.tolist()] + [None]
    zone = np.asarray([a[0] if a else None for a in answers], dtype=object)[key_codes]
    source = np.asarray([a[1] if a else "unknown" for a in answers], dtype=object)[key_codes]
    return zone, source


def _checked_zone(name: object, where: str) -> str:
    """``name`` stripped when it names a zone, else an error starting with ``where``."""
    zone = name.strip() if isinstance(name, str) else ""
    try:
        if zone and ZoneInfo(zone):  # zoneinfo caches each zone it reads
            return zone
        why = "is not a time zone name; give an IANA name such as 'Europe/Madrid'."
    except (ZoneInfoNotFoundError, ValueError):
        why = "is not a known time zone; give an IANA name such as 'Europe/Madrid' or 'America/New_York'."
    raise InputError(f"{where}: {name!r} {why}")


def _time_of_day(value: object, name: str) -> time:
    if isinstance(value, time) and value.tzinfo is None:
        return value
    if isinstance(value, (datetime, time)):
        raise InputError(f"{name} is a time of day on each recipient's own clock, e.g. '10:00', with no date and no "
                         f"time zone; got {value!s}.")
    match = _TIME_OF_DAY.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None or int(match[1]) > 23 or int(match[2]) > 59 or int(match[3] or 0) > 59:
        raise InputError(f"{name} must be a time of day written HH:MM, 00:00 to 23:59 (e.g. '10:00'); got {value!r}.")
    return time(int(match[1]), int(match[2]), int(match[3] or 0))


def _calendar_date(value: object) -> Date | None:
    if value is None or (isinstance(value, Date) and not isinstance(value, datetime)):
        return value
    with contextlib.suppress(ValueError):
        if not isinstance(value, datetime):
            return Date.fromisoformat(str(value))
    raise InputError(f"date is a calendar day written YYYY-MM-DD (e.g. '2026-03-29'); the hour comes from local_time. "
                     f"Got {value!s}.")


def _wall(day: Date, at: time, zone: ZoneInfo) -> datetime:
    """``at`` on ``day`` in ``zone``; a skipped wall time moves forward by the gap, a repeated one is the first."""
    return datetime.combine(day, at, tzinfo=zone).astimezone(UTC).astimezone(zone)


def _send_at(zone: ZoneInfo, at: time | None, day: Date | None, now: datetime,
             quiet: tuple[time, time] | None) -> datetime:
    local_now = now.astimezone(zone)
    if at is None:
        moment = local_now
    elif day is not None:
        moment = _wall(day, at, zone)
    else:
        moment = _wall(local_now.date(), at, zone)
        if moment < now:
            moment = _wall(local_now.date() + timedelta(days=1), at, zone)
    if quiet is not None:
        start, end = quiet
        clock = moment.timetz().replace(tzinfo=None)
        if clock < start:
            moment = _wall(moment.date(), start, zone)
        elif clock >= end:
            moment = _wall(moment.date() + timedelta(days=1), start, zone)
    return moment


def _zones(contacts: pd.DataFrame, timezone_column: str, recipient: str | None, default_region: str,
           default_timezone: str | None) -> tuple[pd.Series, pd.Series]:
    """(zone name, source) per row, as ``string`` Series on the contacts' index."""
    zone = pd.Series(pd.NA, index=contacts.index, dtype="string")
    source = pd.Series("unknown", index=contacts.index, dtype="string")
    column = find_recipient_column(contacts, "phone", timezone_column) if timezone_column else None
    if column is not None:  # found as named, else case-insensitively
        given = contacts[column]
        for row, value in given.dropna().drop_duplicates().items():  # each value once, by its first row
            _checked_zone(value, f"Row {row!r}, column {column!r}")
        zone = given.astype("string").str.strip()
        source[given.notna().to_numpy()] = "column"
    missing = zone.isna().to_numpy()
    phone = (find_recipient_column(contacts, "phone") if recipient is None
             else recipient_column(contacts, "phone", recipient))
    if missing.any() and phone is not None:
        numbers, _ = normalise_phones(contacts.loc[missing, phone], default_region)
        zone[missing], source[missing] = zones_of_numbers(numbers)
    if default_timezone is not None:
        source[zone.isna().to_numpy()] = "default"
        zone = zone.fillna(default_timezone)
    return zone, source


@keyword_checked
def local_send_times(
    contacts: Any,
    local_time: str | time | None = "10:00",
    *,
    date: str | Date | None = None,
    quiet_hours: tuple[str | time, str | time] | None = None,
    timezone_column: str = "timezone",
    recipient: str | None = None,
    now: datetime | str | None = None,
    default_timezone: str | None = None,
    default_region: str = "ES",
) -> pd.DataFrame:
    """When each row is sent: its zone, the local and the UTC send time, and where the zone came from.

    Returns a new frame on the contacts' index with the columns ``timezone``, ``local_send_at``
    (text with the zone's UTC offset, e.g. ``2026-03-29 10:00:00+02:00``), ``send_at_utc``
    (tz-aware UTC) and ``timezone_source`` (``column``, ``number``, ``country``, ``country default``,
    ``default`` or ``unknown``: see the module docstring).

    - ``local_time``: the wall-clock time on each recipient's clock (``"10:00"``); the next one at or
      after ``now``, or the one on ``date``. ``None``: as soon as allowed (now, or the next
      ``quiet_hours`` start).
    - ``date``: the calendar day (``"2026-03-29"``); a send time already past on that day in some
      zone is an error naming the zone.
    - ``quiet_hours=("09:00", "21:00")``: nothing before 09:00 or from 21:00 local; such sends move
      to the next 09:00.
    - ``now``: a tz-aware date-time (default: the current time). A naive date-time is refused.
    - ``default_timezone``: the zone of rows whose zone is otherwise unknown (no timezone value,
      no usable phone: e.g. an email-only table).

        >>> import pandas as pd
        >>> contacts = pd.DataFrame({"phone": ["34600123456"], "timezone": ["Asia/Tokyo"]})
        >>> plan = local_send_times(contacts, "10:00", now="2026-03-28T12:00:00+00:00")
        >>> str(plan.loc[0, "send_at_utc"]), plan.loc[0, "timezone_source"]
        ('2026-03-29 01:00:00+00:00', 'column')
    """
    frame: pd.DataFrame = as_frame(contacts)
    moment = datetime.now(UTC) if now is None else aware_moment(now, "now").to_pydatetime()
    at = None if local_time is None else _time_of_day(local_time, "local_time")
    day = _calendar_date(date)
    if day is not None and at is None:
        raise InputError("date needs a local_time too (e.g. local_time='10:00'), or leave date out to send now.")
    quiet = None
    if quiet_hours is not None:
        if isinstance(quiet_hours, str) or len(quiet_hours) != 2:
            raise InputError("quiet_hours must be (earliest, latest) local times, e.g. ('09:00', '21:00'); "
                             f"got {quiet_hours!r}.")
        quiet = (_time_of_day(quiet_hours[0], "quiet_hours[0]"), _time_of_day(quiet_hours[1], "quiet_hours[1]"))
        if not quiet[0] < quiet[1]:
            raise InputError(f"quiet_hours=({quiet_hours[0]!r}, {quiet_hours[1]!r}): the earliest time must come "
                             "before the latest on the same day.")
    if default_timezone is not None:
        default_timezone = _checked_zone(default_timezone, "default_timezone")

    zone, source = _zones(frame, timezone_column, recipient, default_region, default_timezone)
    codes, names = pd.factorize(zone, use_na_sentinel=True)
    sent = [_send_at(ZoneInfo(name), at, day, moment, quiet) for name in names]
    past = [f"{name} ({s.isoformat(sep=' ')})" for name, s in zip(names, sent, strict=True) if day and s < moment]
    if past:
        raise InputError(f"{at} on {day} has already passed in {len(past)} time zone(s): {', '.join(past[:5])}. "
                         "Give a later date, or leave date out for the next occurrence.")
    local = pd.array([s.isoformat(sep=" ") for s in sent] + [None], dtype="string")[codes]  # -1: no zone, None
    send_at = pd.to_datetime(pd.Series([*sent, None], dtype=object), utc=True).astype("datetime64[us, UTC]").array
    out = pd.DataFrame({"timezone": zone, "local_send_at": local, "send_at_utc": send_at[codes],
                        "timezone_source": source}, index=frame.index)
    out.attrs["now"] = pd.Timestamp(moment)
    return out

