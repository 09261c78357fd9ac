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
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.api.wire import user_stacklevel
from sendframe.errors import InputError, RowsSkippedWarning
from sendframe.options import closest
from sendframe.send_outcomes import SKIP_OUTCOMES
from sendframe.text.templates import column_to_arrow

__all__ = ["KEEP_REASONS", "keep_reasons", "key_codes", "plan_rows", "repeat_reasons", "repeated_rows", "skip_repeats",
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
              capped_reason: str = "") -> pd.DataFrame:
    """Per row of ``index``: ``action`` (``send`` or a skipped outcome) and ``reason`` (plain English, or <NA>).

    ``problems`` is a preflight frame of those rows; ``recipients`` (positional, aligned with
    ``index``) are compared as given to find repeats. A repeat counts only against a row that is
    sent, so a recipient whose first row is skipped still gets the message from its next row.
    ``capped`` marks rows over the frequency cap (``capped_reason`` says why). A row with several errors
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
        repeated = repeated_rows(recipients, rank == _NO_REASON)
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
