"""Which answer item is which recipient, and which contact row is which ledger row.

The rules the ledger applies (its module docstring tells them in full):

- a send answer's item belongs to the row sent at its position only if its ``to`` names that row's
  recipient (:func:`same_recipient`); otherwise the row's fate is unknown;
- a contact row is the ledger row with the same (label, recipient), else the k-th unmatched row of its
  recipient is the k-th unmatched ledger row of that recipient (:func:`match_rows`).

Recipients are compared by their :func:`~sendframe.api.recipients.recipient_key` (in API form, so
``default_region=None``): numbers by their digits, emails case-folded.

    >>> match_rows(["0", "1"], ["447700900001", "447700900002"], ["1", "2"], ["447700900001", "447700900002"])
    [0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from sendframe.api.recipient_columns import recipient_keys
from sendframe.api.recipients import recipient_key
from sendframe.api.wire import SendAnswer

__all__ = ["checked_columns", "match_rows", "same_recipient"]


def same_recipient(sent: str, answered: str | None) -> bool:
    """Whether a result item's ``to`` names the recipient sent at its position.

    The spec says ``to`` is the recipient as sent; a service that reformats it is still recognised:
    both are compared by their recipient key (numbers in API form, whatever ``+``, ``00`` or separators
    the answer writes; emails trimmed and case-folded). A value that is no valid recipient only matches
    itself.

        >>> same_recipient("447700900001", "+44 7700 900001"), same_recipient("a@b.co", "A@B.CO ")
        (True, True)
        >>> same_recipient("447700900001", "447700900002")
        False
    """
    if answered is None:
        return False
    if sent == answered:
        return True
    key = recipient_key(sent, "any", default_region=None)
    return key is not None and key == recipient_key(answered, "any", default_region=None)


def checked_columns(columns: SendAnswer, sent: Sequence[str],
                    fields: Sequence[tuple[str, str]]) -> tuple[dict[str, list[Any]], int]:
    """The answer's ``fields`` (wire key, ``SendAnswer`` attribute) in request order, untrustworthy items blanked.

    An item whose ``to`` is not the recipient sent at its position, and a missing item, leave that row
    unknown (``accepted`` null) with a reason in ``errorDescription``; the ``to`` of every item is then
    kept as ``answeredTo``. Returns (columns by wire key, how many rows were left unknown).

        >>> from sendframe.api.wire import send_answer
        >>> answer = send_answer({"campaignId": 1, "sendingId": 2,
        ...                       "result": [{"accepted": True, "to": "447700900002"}]})
        >>> fields = [("accepted", "accepted"), ("errorDescription", "error_description")]
        >>> kept, unknown = checked_columns(answer, ["447700900001"], fields)
        >>> kept["accepted"], unknown
        ([None], 1)
    """
    answered, n = columns.to, len(sent)
    if answered == list(sent):  # the usual answer: one item per recipient, in order
        return {key: getattr(columns, column) for key, column in fields}, 0
    bad = [i for i in range(n) if i >= len(answered) or not same_recipient(sent[i], answered[i])]
    kept = {key: (list(getattr(columns, column)) + [None] * n)[:n] for key, column in fields}
    for i in bad:
        for key, _ in fields:
            kept[key][i] = None
        kept["errorDescription"][i] = (
            f"the service's answer has no item for recipient {i + 1} ({sent[i]}); {len(answered)} items "
            f"answered {n} recipients, so it is not known whether it was sent" if i >= len(answered) else
            f"the service's answer item {i + 1} is for {answered[i]!r}, not for {sent[i]!r} sent at that position, "
            "so it is not known whether it was sent")
    # items beyond the recipients sent belong to no row: the rows whose item matches keep it
    kept["answeredTo"] = list(answered)
    return kept, len(bad)


def match_rows(stored_keys: list[str], stored_recipients: list[str], keys: list[str],
               recipients: list[str]) -> list[int | None]:
    """For each given (key, recipient), the position in the stored rows of the ledger row it is, or None.

    Stored rows repeat a (key, recipient) pair sent again: its last entry holds what is known. Recipients
    are compared by their recipient key (``"Ana@x.es"`` is ``"ana@x.es"``). First the same pair, then the
    k-th unmatched given row of a recipient takes the k-th unmatched ledger row of that recipient, in the
    order the ledger first recorded them.

        >>> match_rows(["0", "1"], ["A", "B"], ["0", "1", "2"], ["X", "A", "B"])  # a row inserted at the top
        [None, 0, 1]
    """
    stored = pd.DataFrame({"key": stored_keys, "recipient": _keyed(stored_recipients)}, dtype="str")
    # each pair's last entry, the pairs in the order the ledger first recorded them
    latest = stored.assign(at=range(len(stored))).groupby(["key", "recipient"], sort=False, as_index=False)["at"].last()
    given = pd.DataFrame({"key": keys, "recipient": _keyed(recipients)}, dtype="str")
    at = given.merge(latest, how="left", on=["key", "recipient"])["at"].mask(given.duplicated())
    spare, unmatched = latest[~latest["at"].isin(at)], given[at.isna().to_numpy()]
    # the k-th unmatched given row of a recipient takes the k-th spare ledger row of that recipient
    nth = spare.assign(n=spare.groupby("recipient").cumcount())
    taken = unmatched.assign(n=unmatched.groupby("recipient").cumcount()).merge(nth, how="left", on=["recipient", "n"])
    at[at.isna().to_numpy()] = taken["at"].to_numpy()
    return [None if pd.isna(value) else int(value) for value in at]


def _keyed(recipients: list[str]) -> pd.Series:
    # each recipient's key; a value that is no valid recipient stands for itself
    given = pd.Series(recipients, dtype="str")
    return recipient_keys(given, "any", default_region=None).fillna(given)
