"""Which rows a send leaves out, and why: one policy for the library, the CLI, the demo and the Composer.

A row is skipped, with its own outcome, when (first reason wins):

=====================  ==========================================================================
outcome                why
=====================  ==========================================================================
skipped_invalid        the recipient is missing or not a valid phone number / email (preflight's
                       ``invalid_recipient``): the service would reject it (102)
skipped_landline       an SMS, landing SMS or WhatsApp message to a number whose line cannot receive it:
                       fixed line, toll free, premium rate, shared cost, UAN, voicemail, pager
                       (preflight's ``landline``, from phonenumbers' metadata; ``fixed_line_or_mobile``
                       is sent): it would be billed and never arrive
skipped_suppressed     the recipient is on the suppression list given to the send (``opted_out``)
skipped_frequency      the recipient was already sent ``n`` messages in the last ``days`` days
                       (``frequency_cap=(n, days)``, from earlier campaigns' ledgers or a history)
skipped_preflight      another preflight error of the row (a missing variable, too many parts, a
                       ``{x|shorten}`` value that is not a URL, a missing WhatsApp field)
skipped_duplicate      the recipient already gets the message from an earlier row that is sent
=====================  ==========================================================================

``keep=`` names the reasons to send anyway (``"invalid"``, ``"landline"``, ``"suppressed"``, ``"frequency"``,
``"preflight"``, ``"duplicate"``): the service then answers for those rows as it would.

    >>> import pandas as pd
    >>> problems = pd.DataFrame({"row": [1], "column": ["phone"], "rule": ["invalid_recipient"],
    ...                          "message": ["..."], "severity": ["error"]})
    >>> plan_rows(problems, pd.Index([0, 1, 2]), pd.Series(["a", None, "a"]))["action"].tolist()
    ['send', 'skipped_invalid', 'skipped_duplicate']

**Frequency caps** (``skipped_frequency``): who was sent ``n`` messages in the last ``days`` days, by earlier campaigns.

The history is a frame with a ``recipient`` and a tz-aware ``sent_at`` per message sent, passed by
the analyst or read from earlier campaigns' ledgers with :func:`history_from_ledgers`. Pure
functions: nothing is sent or written.

A ledger has no time per row: a batch's rows share its ``intent_at`` (when the request was about to
leave), and a row the service scheduled for later (``scheduled_at``) counts at that time. Rows that
count are those the service accepted and those whose fate is unknown (they may have been sent;
counting them is the side that never messages anyone too often). Rejected and not-sent rows do not.

    >>> import pandas as pd
    >>> history = pd.DataFrame({"recipient": ["34600000001"] * 2 + ["34600000002"],
    ...                         "sent_at": pd.to_datetime(["2026-03-01", "2026-03-05", "2026-03-05"], utc=True)})
    >>> now = pd.Timestamp("2026-03-06", tz="UTC")
    >>> frequency_capped(pd.Series(["+34 600 000 001", "34600000002"]), history, 2, 7, now).tolist()
    [True, False]
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.api.recipient_columns import recipient_keys
from sendframe.api.wire import user_stacklevel
from sendframe.campaign.ledger import SPENT_STATES, Ledger, is_ledger
from sendframe.errors import InputError, RowsSkippedWarning
from sendframe.options import closest
from sendframe.send_outcomes import SKIP_OUTCOMES
from sendframe.text.templates import column_to_arrow

__all__ = ["KEEP_REASONS", "aware_moment", "frequency_capped", "frequency_window", "history_from_ledgers",
           "keep_reasons", "key_codes", "plan_rows", "recent_sends", "repeat_reasons", "repeated_rows", "skip_repeats",
           "skipped_summary", "warn_skipped"]

KEEP_REASONS: tuple[str, ...] = tuple(SKIP_OUTCOMES)
_RULE_REASON = {"invalid_recipient": "invalid", "landline": "landline", "opted_out": "suppressed"}
_NO_REASON = -1
_ACTIONS = pa.array(["send", *SKIP_OUTCOMES.values()], type=pa.large_string())  # by rank + 1
_WHAT = {
    "invalid": "with a missing or invalid recipient",
    "landline": "whose number's line cannot receive the message (fixed line, toll free, ...)",
    "suppressed": "on the suppression list",
    "frequency": "over the frequency cap",
    "preflight": "with a preflight error (see .preflight())",
    "duplicate": "whose recipient repeats an earlier row",
}


def keep_reasons(keep: str | Iterable[str] | None) -> frozenset[str]:
    """``keep=`` as a set of reasons, checked.

        >>> sorted(keep_reasons("duplicate")), sorted(keep_reasons(["invalid", "preflight"]))
        (['duplicate'], ['invalid', 'preflight'])
    """
    if keep is None:
        return frozenset()
    names = [keep] if isinstance(keep, str) else list(keep)
    for name in names:
        if name not in SKIP_OUTCOMES:
            near = closest(str(name), [*KEEP_REASONS, *SKIP_OUTCOMES.values()])
            hint = f" Did you mean {near.removeprefix('skipped_')!r}?" if near else ""
            raise InputError(f"keep= takes {', '.join(map(repr, KEEP_REASONS))}, not {name!r}.{hint}")
    return frozenset(names)


def plan_rows(problems: pd.DataFrame, index: pd.Index, recipients: pd.Series,
              keep: frozenset[str] = frozenset(), capped: np.ndarray | None = None,
              capped_reason: str = "", *, codes: np.ndarray | None = None) -> pd.DataFrame:
    """Per row of ``index``: ``action`` (``send`` or a skipped outcome) and ``reason`` (plain English, or <NA>).

    ``problems`` is a preflight frame of those rows; ``recipients`` (positional, aligned with
    ``index``) are compared as given to find repeats. A repeat counts only against a row that is
    sent, so a recipient whose first row is skipped still gets the message from its next row.
    ``capped`` marks rows over the frequency cap (``capped_reason`` says why); ``codes``: the recipients'
    :func:`key_codes` when the caller has them. A row with several errors
    takes the reason that comes first in :data:`KEEP_REASONS` (the first such error's message). Array
    work throughout: a million rows take a fraction of a second.
    """
    rank = np.full(len(index), _NO_REASON, dtype=np.int8)  # position of the row's reason in KEEP_REASONS
    messages = np.full(len(index), None, dtype=object)

    def skip(rows: np.ndarray, reason: str, why: Any) -> None:
        rank[rows], messages[rows] = KEEP_REASONS.index(reason), why

    errors = problems[(problems["severity"] == "error") & problems["row"].notna()]
    reasons = errors["rule"].map(_RULE_REASON).fillna("preflight").to_numpy(dtype=object)
    found = pd.DataFrame({
        # labels as the index holds them (the row column is object when a campaign problem has none)
        "at": index.get_indexer(pd.Index(errors["row"].to_numpy(dtype=object)).infer_objects()) if len(errors) else [],
        "rank": pd.Categorical(reasons, categories=list(KEEP_REASONS)).codes.astype(np.int8),
        "message": errors["message"].to_numpy(dtype=object)})
    # each row's error of the lowest rank, the first one among equals (a stable sort keeps their order)
    found = found[(found["at"] >= 0).to_numpy() & ~np.isin(reasons, list(keep))].sort_values(
        ["at", "rank"], kind="stable").drop_duplicates("at")
    rank[found["at"]], messages[found["at"]] = found["rank"], found["message"]
    if capped is not None and "frequency" not in keep:
        # the cap outranks the reasons after it (preflight, duplicate), not those before it
        skip(np.asarray(capped, dtype=bool) & ((rank == _NO_REASON) | (rank > KEEP_REASONS.index("frequency"))),
             "frequency", capped_reason)
    if "duplicate" not in keep:
        repeated = repeated_rows(recipients if codes is None else codes, rank == _NO_REASON)
        skip(repeated, "duplicate", repeat_reasons(pd.Series(recipients).to_numpy(dtype=object)[repeated]))
    action = _ACTIONS.take(pa.array(rank.astype(np.int64) + 1))
    reason = pa.array(messages, type=pa.large_string(), from_pandas=True)
    return pd.DataFrame({"action": pd.array(action, dtype="str"), "reason": pd.array(reason, dtype="str")},
                        index=index)


def repeated_rows(recipients: pd.Series | np.ndarray, among: np.ndarray | None = None) -> np.ndarray:
    """Which rows (of ``among``, default all) repeat the recipient of an earlier such row; a missing one never does.
    ``recipients``: the recipient keys, or their :func:`key_codes` (an integer array, negative where missing).

        >>> repeated_rows(pd.Series(["a", "b", "a", None, None, "b"]), np.array([1, 0, 1, 1, 1, 1], bool)).tolist()
        [False, False, True, False, False, False]
    """
    codes = recipients if isinstance(recipients, np.ndarray) and recipients.dtype.kind == "i" else key_codes(recipients)
    among = codes >= 0 if among is None else np.asarray(among, dtype=bool) & (codes >= 0)
    repeated = np.zeros(len(codes), dtype=bool)
    repeated[among] = pd.Series(codes[among]).duplicated(keep="first").to_numpy()
    return repeated


def key_codes(values: pd.Series | np.ndarray) -> np.ndarray:
    """A code per value counting up in order of first appearance, equal for equal values (-1: missing).

        >>> key_codes(pd.Series(["b", None, "a", "b"], dtype="str")).tolist()
        [0, -1, 1, 0]
    """
    values = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(values.dtype, pd.StringDtype):  # hashed by Arrow
        codes: np.ndarray = pc.dictionary_encode(column_to_arrow(values)).indices.fill_null(-1).to_numpy(
            zero_copy_only=False)
        return codes.astype(np.int64)
    found, _ = pd.factorize(values, use_na_sentinel=True)
    return np.asarray(found, dtype=np.int64)


def repeat_reasons(recipients: Iterable[Any]) -> np.ndarray:
    """The reason of a row skipped because each of ``recipients`` already gets the message from an earlier row.

        >>> repeat_reasons(["34600123456"]).tolist()
        ['34600123456 already gets the message from an earlier row.']
    """
    said = pd.Series(list(recipients), dtype="str") + " already gets the message from an earlier row."
    return said.to_numpy(dtype=object)


def skip_repeats(plan: pd.DataFrame, rows: np.ndarray, keys: Iterable[Any]) -> pd.DataFrame:
    """``plan`` (``action``, ``reason``) with ``rows`` (a boolean mask) skipped as repeats of an earlier row sent
    elsewhere (another variant, another partition): ``keys``, one per such row in order, are their recipients.

        >>> plan = pd.DataFrame({"action": ["send", "send"], "reason": pd.Series([None, None], dtype="str")})
        >>> skip_repeats(plan, np.array([False, True]), ["ana@example.com"]).to_dict("list")["action"]
        ['send', 'skipped_duplicate']
    """
    plan = plan.copy()
    plan.loc[rows, "action"] = "skipped_duplicate"
    plan.loc[rows, "reason"] = repeat_reasons(keys)
    return plan


def skipped_summary(plan: pd.DataFrame, verb: str = "sent") -> str | None:
    """One plain-English sentence saying how many rows are left out and why (None when none are).

        >>> plan = pd.DataFrame({"action": ["send", "skipped_duplicate", "skipped_invalid", "skipped_invalid"]})
        >>> import textwrap
        >>> print(textwrap.fill(skipped_summary(plan), 100))
        3 of 4 rows not sent: 2 with a missing or invalid recipient (skipped_invalid), 1 whose recipient
        repeats an earlier row (skipped_duplicate). Each row's outcome says why; keep=['invalid',
        'duplicate'] sends them anyway.
    """
    counts = plan["action"].value_counts()
    skipped = {reason: int(counts[outcome]) for reason, outcome in SKIP_OUTCOMES.items() if counts.get(outcome, 0)}
    if not skipped:
        return None
    said = ", ".join(f"{count} {_WHAT[reason]} ({SKIP_OUTCOMES[reason]})" for reason, count in skipped.items())
    return (f"{sum(skipped.values())} of {len(plan)} rows not {verb}: {said}. "
            f"Each row's outcome says why; keep={list(skipped)!r} sends them anyway.")


def warn_skipped(plan: pd.DataFrame, dry_run: bool = False) -> None:
    """Say once, as a :class:`~sendframe.errors.RowsSkippedWarning`, which rows of a send's ``plan`` are left out."""
    summary = skipped_summary(plan, "to be sent" if dry_run else "sent")
    if summary:
        warnings.warn(summary, RowsSkippedWarning, stacklevel=user_stacklevel())



def aware_moment(moment: object, name: str) -> pd.Timestamp:
    """``moment`` (a tz-aware datetime or its ISO text) in UTC; a naive one is refused with a hint to give a zone.

        >>> str(aware_moment("2026-03-06T13:00:00+01:00", "now"))
        '2026-03-06 12:00:00+00:00'
    """
    try:
        stamp = pd.Timestamp(moment) if isinstance(moment, (str, datetime)) else None
    except ValueError:
        stamp = None
    if stamp is None:
        raise InputError(f"{name} must be a date-time with a time zone, e.g. '2026-03-06T12:00:00+00:00'; "
                         f"got {moment!r}.")
    if stamp.tzinfo is None:
        raise InputError(f"{name}={stamp} has no time zone: give a zone, "
                         "e.g. pd.Timestamp('2026-03-06 12:00', tz='UTC').")
    return stamp.tz_convert("UTC")


def frequency_window(n: object, days: object, option: str = "") -> tuple[int, float]:
    """A frequency cap's ``n`` messages and ``days``, checked: a whole number >= 1 and a number of days > 0
    (``option`` names where they were given, for the error).

        >>> frequency_window(2, 7), frequency_window(2.0, 0.5)
        ((2, 7.0), (2, 0.5))
    """
    said, number = f"{option}: " if option else "", (int, float, np.integer, np.floating)
    if isinstance(n, bool) or not isinstance(n, number) or not float(n).is_integer() or n < 1:
        raise InputError(f"{said}n, the number of messages allowed, must be a whole number >= 1; got {n!r}.")
    if isinstance(days, bool) or not isinstance(days, number) or not days > 0:
        raise InputError(f"{said}days must be a number of days > 0; got {days!r}.")
    return int(n), float(days)


def recent_sends(history: pd.DataFrame, days: float, now: datetime | str, *, default_region: str = "ES") -> pd.Series:
    """How many messages each recipient was sent after ``now - days`` (later scheduled ones included).

    Returns an ``Int64`` Series named ``sends``, indexed by the recipient (as :func:`recipient_keys`
    writes it), only recipients with at least one send.

        >>> history = pd.DataFrame({"recipient": ["34600000001", "34600000001"],
        ...                         "sent_at": pd.to_datetime(["2026-02-01", "2026-03-05"], utc=True)})
        >>> recent_sends(history, 7, "2026-03-06T00:00:00+00:00").to_dict()
        {'34600000001': 1}
    """
    if not isinstance(history, pd.DataFrame):
        raise InputError("The send history must be a DataFrame with 'recipient' and 'sent_at', "
                         f"not {type(history).__name__}.")
    missing = [c for c in ("recipient", "sent_at") if c not in history]
    if missing:
        raise InputError(f"The send history needs the columns 'recipient' and 'sent_at' (tz-aware); "
                         f"it lacks {missing}.")
    sent_at = history["sent_at"]
    if not isinstance(sent_at.dtype, pd.DatetimeTZDtype):
        raise InputError("The history's sent_at has no time zone: give a zone, e.g. history['sent_at'].dt.tz_localize("
                         "'UTC') when the times are UTC." if pd.api.types.is_datetime64_dtype(sent_at.dtype) else
                         f"The history's sent_at must hold tz-aware date-times, not {sent_at.dtype}.")
    frequency_window(1, days)
    start = aware_moment(now, "now") - pd.Timedelta(days=float(days))
    recent = history[(history["sent_at"] > start).to_numpy(dtype=bool)]
    keys = recipient_keys(recent["recipient"], "any", default_region=default_region).dropna()
    counts = keys.value_counts(sort=False).astype("Int64")
    counts.index.name = "recipient"
    return counts.rename("sends")


def frequency_capped(recipients: pd.Series | Iterable[Any], history: pd.DataFrame, n: int, days: float,
                     now: datetime | str, *, default_region: str = "ES") -> np.ndarray:
    """True for each recipient already sent ``n`` or more messages after ``now - days``: skip them.

    ``recipients`` is the column of the contacts that will be sent to (phones in any form
    ``read_contacts`` repairs, or emails); the answer is in its order. Missing recipients are not
    capped (they are not sent anyway).

        >>> history = pd.DataFrame({"recipient": ["a@example.com"],
        ...                         "sent_at": pd.to_datetime(["2026-03-05"], utc=True)})
        >>> frequency_capped(["A@example.com", "b@example.com"], history, 1, 30, "2026-03-06T00:00:00+00:00").tolist()
        [True, False]
    """
    frequency_window(n, days)
    series = recipients if isinstance(recipients, pd.Series) else pd.Series(list(recipients), dtype=object)
    counts = recent_sends(history, days, now, default_region=default_region)
    keys = recipient_keys(series, "any", default_region=default_region)
    return (keys.map(counts).fillna(0) >= int(n)).to_numpy(dtype=bool)


_HISTORY_COLUMNS = {"recipient": "string", "sent_at": "datetime64[us, UTC]", "state": "string", "ledger": "string",
                    "batch": "Int64"}


def history_from_ledgers(folder_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                         exclude: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The messages earlier campaigns sent, read from their ledgers (read-only), as a send history.

    ``folder_or_paths``: a folder (every SQLite file in it that is a ledger; other files are
    ignored), one ledger file, or a list of them. Columns: ``recipient``, ``sent_at`` (tz-aware
    UTC: the batch's intent time, or the time the service scheduled the message for), ``state``
    (``accepted`` or ``unknown``: the rows that count, see the module docstring), ``ledger`` (its
    path) and ``batch``. A row sent again in a later batch appears once per batch that counts.
    ``exclude``: a ledger left out (the running campaign's own, so resuming it never caps its rows).

        >>> history = history_from_ledgers("campaigns/")  # doctest: +SKIP
        >>> frequency_capped(contacts["phone"], history, n=2, days=7, now=now)  # doctest: +SKIP
    """
    if isinstance(folder_or_paths, (str, os.PathLike)) and Path(folder_or_paths).is_dir():
        # is_ledger opens a file read-only: SQLite's -wal, -shm and -journal files and lock files are not ledgers
        paths = [path for path in sorted(Path(folder_or_paths).iterdir()) if path.is_file() and is_ledger(path)]
    else:
        named = [folder_or_paths] if isinstance(folder_or_paths, (str, os.PathLike)) else folder_or_paths
        paths = [Path(p) for p in named]
        missing = [str(path) for path in paths if not path.is_file()]
        if missing:
            raise InputError(f"The ledger {missing[0]!r} does not exist.")
    left_out = Path(exclude).resolve() if isinstance(exclude, (str, os.PathLike)) else None
    frames = []
    for path in paths:
        if left_out is None or path.resolve() != left_out:
            with Ledger(path, read_only=True) as ledger:  # one row per (row, batch), nothing written
                rows = ledger.batch_rows()
            scheduled = pd.to_datetime(rows["scheduled_at"], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
            sent_at = scheduled.fillna(rows["intent_at"].astype("datetime64[us, UTC]"))
            frames.append(pd.DataFrame({"recipient": rows["recipient"], "sent_at": sent_at, "state": rows["state"],
                                        "ledger": str(path), "batch": rows["batch"]})[rows["state"].isin(SPENT_STATES)])
    history = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(_HISTORY_COLUMNS))
    return history.astype(_HISTORY_COLUMNS)
