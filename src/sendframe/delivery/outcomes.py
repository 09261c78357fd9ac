"""One row per recipient: what was sent, what came back, what it cost.

The tidy table the dashboards draw from. It joins the send result frame with the delivery
notifications (``read_callbacks``) and the message records (``fetch_records``), whichever are at
hand; ``outcomes`` adds the contacts' own columns, on the contacts' index.

    >>> import pandas as pd
    >>> results = pd.DataFrame({"id": ["a1", None], "accepted": [True, False], "outcome": ["accepted", "rejected"]})
    >>> message_outcomes(results)["status"].tolist()
    ['PENDING', 'NOT_SENT']
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.api.countries import recipient_countries
from sendframe.api.notifications import (
    deciding_order,
    is_final_notification,
    last_of_each,
    notification_status,
    utc_instants,
)
from sendframe.delivery.contact_table import checked_contacts
from sendframe.engines import dispatched
from sendframe.errors import InputError
from sendframe.memory import release_unused_memory
from sendframe.options import check_options, keyword_checked
from sendframe.send_outcomes import SKIPPED_OUTCOMES

# display order of a message's status, best first; the dashboards keep this order and its colours
OUTCOME_STATUSES: tuple[str, ...] = (
    "DELIVRD",
    "PENDING",
    "UNDELIV",
    "EXPIRED",
    "REJECTD",
    "DELETED",
    "NOT_SENT",
    "UNKNOWN_OUTCOME",
)
FAILED_STATUSES = frozenset({"UNDELIV", "EXPIRED", "REJECTD", "DELETED"})
_STATUS_CODE = {status: code for code, status in enumerate(OUTCOME_STATUSES)}
# the categories held as Python strings: ``status.astype("string")`` (the charts draw from it) then takes about 40
# bytes a row at its peak; of a categorical of str (Arrow) categories it took about 100
STATUS_TYPE = pd.CategoricalDtype(pd.Index(OUTCOME_STATUSES, dtype=object), ordered=True)

# the send result's outcomes that never reached the service: refused, not attempted yet, or left out before sending
NOT_SENT_OUTCOMES = frozenset({"rejected", "not_sent", "dry_run", *SKIPPED_OUTCOMES})
CONTACT_PREFIX = "contact_"  # a contact column named like an outcome column gets it
# where assign_variants records the split (column, weights, seed, holdout); outcomes carries it to the outcome
# table, so compare_variants can check the counts per variant against the weights
VARIANTS_ATTR = "sendframe.variants"

OUTCOME_COLUMNS: tuple[str, ...] = (
    "id", "campaign_id", "sending_id", "recipient", "country", "mnc", "outcome", "error_code",
    "error_description", "status", "sent_at", "delivered_at", "seconds_to_delivery", "clicked", "unsubscribed",
    "parts", "estimated_cost", "billed_cost",
)


def operator_label(country: pd.Series, mnc: pd.Series) -> pd.Series:
    """The operator a message went through: country and MNC, since an MNC alone is only unique within a country.
    A categorical (its labels in order): each label is written once per operator, not once per row.

    >>> operator_label(pd.Series(["ES", "GB", None]), pd.Series(["01", "01", "07"])).tolist()
    ['ES 01', 'GB 01', '? 07']
    """
    country_codes, countries = pd.factorize(country)
    mnc_codes, mncs = pd.factorize(mnc)
    width = len(mncs) + 1  # a missing value is code -1: each pair as one number, (country + 1) * width + mnc + 1
    keys = np.asarray(country_codes, dtype=np.int64)  # each row's pair as one number, made in place
    keys += 1
    keys *= width
    keys += mnc_codes
    keys += 1
    # the pairs are few and small numbers: found by counting, not hashed (a hash table sized for every row)
    seen = np.bincount(keys, minlength=(len(countries) + 1) * width) > 0
    pairs = np.flatnonzero(seen)
    codes = (np.cumsum(seen) - 1)[keys]
    names = (["?", *map(str, countries)], ["?", *map(str, mncs)])
    labels = np.array([f"{names[0][pair // width]} {names[1][pair % width]}" for pair in pairs], dtype=object)
    order = np.argsort(labels, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return pd.Series(pd.Categorical.from_codes(rank[codes], categories=pd.Index(labels[order], dtype="str")),
                     index=country.index)


def final_status_per_message(callbacks: pd.DataFrame) -> pd.DataFrame:
    """One row per message id: its final status when one arrived, else its latest intermediate one.

    Arrival order does not matter: a final notification always wins over an intermediate one
    (``is_final_notification``: by its status, or by its delivery value when the status is missing).
    ``status`` is the status each notification stands for, so a notificationUrl with ``%d`` and
    no ``%s`` still gives DELIVRD, UNDELIV or REJECTD; ``is_final`` says whether it is final.
    Among notifications of the same kind the latest ``reported_at`` wins (a missing one counts as latest).

    >>> callbacks = pd.DataFrame({"id": ["a1", "a1"], "status": [None, None], "delivery": [1, 4],
    ...     "sent_at": pd.NaT, "reported_at": pd.to_datetime(["2026-01-01 10:01", "2026-01-01 10:05"], utc=True),
    ...     "cost": 0.05, "mnc": "01", "recipient": "34600123456", "part": 1})
    >>> final_status_per_message(callbacks)["status"].tolist()
    ['DELIVRD']
    """
    columns = ["status", "is_final", "sent_at", "reported_at", "mnc", "recipient"]
    if callbacks is None or callbacks.empty:
        return pd.DataFrame(columns=["id", *columns, "billed_cost"])
    latest = latest_per_message(callbacks)
    order = np.asarray(pc.sort_indices(latest.ids))  # by id, as a sort of the ids gives them
    rows = latest.rows[order]
    decided: pd.DataFrame = callbacks.iloc[rows][["id", "sent_at", "reported_at", "mnc", "recipient"]]
    out = decided.reset_index(drop=True)
    out.insert(1, "status", pd.Series(latest.status[order]))
    out.insert(2, "is_final", latest.is_final[order])
    out["billed_cost"] = latest.billed[order]
    out["status"] = out["status"].astype("string")
    return out[["id", *columns, "billed_cost"]]


@dataclass(frozen=True)
class LatestStatus:
    """What ``final_status_per_message`` says, as arrays over the distinct message ids (in ``ids``' order)."""

    ids: pa.Array  # the distinct ids of the callbacks (large_string)
    rows: np.ndarray  # per id: the position (in the callbacks) of the notification that decides its status
    status: pd.Categorical  # per id: the status it stands for (missing: none), a code per id, not a text
    is_final: np.ndarray  # per id: whether that status is final
    billed: np.ndarray  # per id: the cost billed (float, NaN when no notification says)


def text_array(values: pd.Series) -> pa.Array:
    """A column as one Arrow large_string array (missing values null).

    >>> text_array(pd.Series(["a1", None])).to_pylist()
    ['a1', None]
    """
    array = text_chunks(values)
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def text_chunks(values: pd.Series) -> pa.Array | pa.ChunkedArray:
    """A column as Arrow large_string in the chunks it is held in: a ``string`` column read in pieces (a log's
    polls, the records' groups) is not copied into one array, as :func:`text_array` does. Lookups
    (:func:`positions_among`) and :func:`taken` work on it as they are.

    >>> text_chunks(pd.Series(["a1", None])).to_pylist()
    ['a1', None]
    """
    text = values if isinstance(values.dtype, pd.StringDtype) else values.astype("string")
    return pa.array(text, type=pa.large_string(), from_pandas=True)


def as_string(values: pd.Series) -> pd.Series:
    """``values.astype("string")``; a categorical's texts are taken from its categories in Arrow (through
    pandas, a Python string per row: at a million rows 100 MiB at the peak for a 14 MiB column).

    >>> as_string(pd.Series(pd.Categorical(["sent", None, "sent"]), index=[3, 4, 5])).tolist()
    ['sent', <NA>, 'sent']
    """
    if not isinstance(values.dtype, pd.CategoricalDtype) or values.cat.categories.inferred_type != "string":
        return values.astype("string")
    return string_series(pa.array(values).dictionary_decode(), values.index, values.name)


def string_series(texts: pa.Array, index: pd.Index, name: Any = None) -> pd.Series:
    """An Arrow string array as a ``string`` Series on ``index``, without a Python string per row.

    >>> string_series(pa.array(["a1", None]), pd.Index([3, 4])).tolist()
    ['a1', <NA>]
    """
    converted = texts.to_pandas(types_mapper={texts.type: pd.StringDtype()}.get)
    return pd.Series(converted.array, index=index, name=name)


def taken(texts: pa.Array | pa.ChunkedArray, positions: np.ndarray) -> pa.Array | pa.ChunkedArray:
    """The texts at ``positions``; null where a position is -1.

    >>> taken(pa.array(["a", "b"]), np.array([1, -1, 0])).to_pylist()
    ['b', None, 'a']
    """
    return texts.take(pa.array(positions, mask=positions < 0))


def _among(values: pd.Series, wanted: Iterable[str]) -> np.ndarray:
    """Which rows hold one of ``wanted`` (missing: no), decided once per distinct value."""
    codes, uniques = pd.factorize(values)
    found = np.isin(np.asarray(uniques, dtype=object), list(wanted))
    return np.append(found, False)[codes]


def _statuses(callbacks: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """notification_status and is_final_notification, asked once per distinct (status, delivery): each row's
    kind (a code), what each kind stands for (object: str or None), and whether each row is final."""
    columns = ["status", "delivery"] if "delivery" in callbacks else ["status"]
    combined = np.zeros(len(callbacks), dtype=np.int64)
    for column in columns:  # missing values are values too
        codes, uniques = pd.factorize(callbacks[column], use_na_sentinel=False)
        combined = combined * (len(uniques) + 1) + codes
    kinds = pd.factorize(combined)[0]
    kinds = kinds.astype(np.min_scalar_type(kinds.max(initial=0)))  # a few kinds: a byte a row, not eight
    del combined
    # factorize numbers the kinds in order of appearance: a row starts a kind where its code passes all before it
    first = np.flatnonzero(np.diff(np.maximum.accumulate(kinds), prepend=-1) > 0)
    distinct = callbacks.iloc[first]
    delivery = distinct.get("delivery")
    stands_for = notification_status(distinct["status"], delivery)
    said = stands_for.to_numpy(dtype=object)
    said[stands_for.isna().to_numpy()] = None
    final = is_final_notification(distinct["status"], delivery).to_numpy(dtype=bool)
    return kinds, said, final[kinds]


def latest_per_message(callbacks: pd.DataFrame, among: pa.Array | None = None) -> LatestStatus:
    """The notification that decides each message's status, and its billed cost, as array work.

    Per id, the notification :func:`~sendframe.api.notifications.deciding_order` puts last; the cost billed
    is the highest of the message's parts, each part's from its first notification in that order.
    ``among`` (distinct ids, no missing one): the ids to answer for, in its order. A notification of another id
    is left out, and an id without one has a row of -1, no status, is not final and has no cost. Without it the
    ids are the callbacks' own, in order of first appearance.

    >>> frame = pd.DataFrame({"id": ["a1", "a1", "b2"], "status": ["DELIVRD", "ACCEPTD", "ACCEPTD"],
    ...     "reported_at": pd.to_datetime(["2026-01-01 10:01", "2026-01-01 10:05", None], utc=True),
    ...     "cost": [0.05, 0.05, 0.04], "part": 1})
    >>> latest = latest_per_message(frame)
    >>> latest.ids.to_pylist(), latest.status.tolist(), latest.rows.tolist()
    (['a1', 'b2'], ['DELIVRD', 'ACCEPTD'], [0, 2])
    >>> latest_per_message(frame, among=pa.array(["c3", "b2"], pa.large_string())).rows.tolist()
    [-1, 2]
    """
    # Per-row arrays are kept narrow (int32 codes, the costs of first parts only): at a million messages there
    # are about two notifications each, and these arrays, alive together, made most of the outcomes' peak
    if among is None:  # Arrow's dictionary encoding, a chunk (a read of the log) at a time: the ids are not copied
        codes, distinct_ids = pd.factorize(as_string(callbacks["id"]))
        ids = text_array(pd.Series(distinct_ids, dtype="string"))
        del distinct_ids
    else:  # in order of arrival, a message's notifications apart: hashed (codes_among would look for runs in vain)
        codes, ids = positions_among(text_chunks(callbacks["id"]), among), among
    code = codes.astype(np.int32)
    del codes
    present = np.flatnonzero(code >= 0) if (code < 0).any() else None
    if present is not None:
        code = code[present]
    needed = [c for c in ("status", "delivery", "reported_at", "received_at", "part", "cost") if c in callbacks]
    kept = callbacks[needed] if present is None else callbacks[needed].iloc[present]
    kinds, stands_for, is_final = _statuses(kept)
    order = deciding_order(kept, code, is_final)
    ordered = code[order]
    ends = last_of_each(ordered)
    last, noted = order[ends], ordered[ends]  # per id that has a notification (``noted``, ascending): the deciding one
    # billed once per message: each part's cost from its first notification in that order, the highest of the parts
    part_codes = pd.factorize(kept["part"], use_na_sentinel=False)[0] if "part" in kept else np.zeros(len(kept), int)
    pair = ordered * np.int64(part_codes.max(initial=0) + 1) + part_codes[order]
    del ordered, part_codes
    first_of_part = order[~pd.Series(pair).duplicated().to_numpy()]
    del pair, order
    cost = pd.to_numeric(kept["cost"].iloc[first_of_part], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    billed = np.full(len(ids), np.nan)
    np.fmax.at(billed, code[first_of_part], cost)
    rows = np.full(len(ids), -1, dtype=np.int64)
    rows[noted] = last if present is None else present[last]
    # the few kinds' statuses, taken by each id's kind: a code per id (an object array of 845k texts and its
    # lookup against the statuses was 45 MiB of the outcomes' peak at a million messages)
    kind = np.full(len(ids), -1, dtype=np.int64)
    kind[noted] = kinds[last]
    final = np.zeros(len(ids), dtype=bool)
    final[noted] = is_final[last]
    return LatestStatus(ids, rows, pd.Categorical(stands_for).take(kind, allow_fill=True), final, billed)


def _first_events(row_codes: np.ndarray, event_codes: np.ndarray, dates: np.ndarray,
                  chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row (``row_codes``: its id's code, -1 for none): whether one of the chosen events is its message's,
    and the earliest date of those (NaT when none of them has one). ``event_codes``: each event's id's code."""
    rows = np.flatnonzero(chosen & (event_codes >= 0))
    count = max(int(row_codes.max(initial=-1)), int(event_codes.max(initial=-1))) + 1
    has = np.bincount(event_codes[rows], minlength=count) > 0
    # the earliest date per code in place (NaT, the smallest int64, left out): no group table of a row per event,
    # which at a million messages took a third of a second and 50 MiB per kind
    stamps = np.asarray(dates, dtype="datetime64[us]").view(np.int64)  # a view: the dates are not copied per kind
    dated = rows[~np.isnat(dates[rows])]
    never = np.iinfo(np.int64).max
    earliest = np.full(count + 1, never, dtype=np.int64)  # the last: the "none" a code of -1 picks
    np.minimum.at(earliest, event_codes[dated], stamps[dated])
    earliest[earliest == never] = np.iinfo(np.int64).min  # NaT
    return np.append(has, False)[row_codes], earliest.view("datetime64[us]")[row_codes]


def _texts_at(values: pd.Series, rows: np.ndarray) -> pa.Array | pa.ChunkedArray:
    """A text column's values at ``rows`` (-1: none) as Arrow text; a categorical's taken as codes, then decoded
    (no text per row of the whole column is made).

    >>> _texts_at(pd.Series(pd.Categorical(["01", "07"])), np.array([1, -1])).to_pylist()
    ['07', None]
    """
    if not isinstance(values.dtype, pd.CategoricalDtype) or values.cat.categories.inferred_type != "string":
        return taken(text_chunks(values), rows)
    return taken(pa.array(values.array), rows).dictionary_decode().cast(pa.large_string())


def positions_among(keys: pa.Array | pa.ChunkedArray, values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Each key's first position among ``values`` (-1 where absent); a missing key matches a missing value.

    >>> positions_among(pa.array(["b", "z", "a"]), pa.array(["b", "a", "b"])).tolist()
    [0, -1, 1]
    """
    found = pc.index_in(keys, value_set=values)
    return np.asarray(pc.fill_null(found, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


def codes_among(keys: pa.Array | pa.ChunkedArray, distinct: pa.Array) -> np.ndarray:
    """Each key's position among ``distinct`` (distinct values), -1 where absent or missing: as
    :func:`positions_among`, but keys that are runs of ``distinct``'s values in its order (the records of the
    messages asked for, their events, each message's together) are matched by comparing neighbours, not hashed.
    A hash table of a million ids outgrows the processor's cache: looking up 2M ids took 2.4 times as long as 1M.

    >>> codes_among(pa.array(["a", "a", "b", "c"]), pa.array(["a", "b", "c"])).tolist()
    [0, 0, 1, 2]
    >>> codes_among(pa.array(["c", None, "z"]), pa.array(["a", "b", "c"])).tolist()
    [2, -1, -1]
    """
    if len(keys) and len(distinct) and keys.null_count == 0:
        changes = pc.not_equal(keys[1:], keys[:-1])
        starts = np.flatnonzero(np.append(True, changes.to_numpy(zero_copy_only=False)))
        if len(starts) == len(distinct) and pc.all(pc.equal(keys.take(starts), distinct)).as_py():
            return np.repeat(np.arange(len(distinct)), np.diff(starts, append=len(keys)))
    return positions_among(keys, distinct)


class _Joined:
    """The per-row arrays ``message_outcomes`` fills from the callbacks, then the records (its own, not the caller's).

    Each source is joined in a function of its own, so its lookups' arrays are gone before the next one begins."""

    def __init__(self, status: np.ndarray, *, recipient: pa.Array | pa.ChunkedArray, fill_recipients: bool) -> None:
        size = len(status)
        self.status = status
        self.recipient = recipient
        self.fill_recipients = fill_recipients  # no recipients given: the callbacks' and records' fill them in
        self.sent_at = np.full(size, np.datetime64("NaT"), dtype="datetime64[us]")
        self.delivered_at = self.sent_at.copy()
        self.mnc: pa.Array | pa.ChunkedArray = pa.nulls(size, pa.large_string())
        self.billed = np.full(size, np.nan)
        self.clicked: pd.api.extensions.ExtensionArray = pd.array(np.zeros(size, dtype=bool), dtype="boolean")
        self.unsubscribed = np.zeros(size, dtype=bool)


def _join_callbacks(joined: _Joined, callbacks: pd.DataFrame, row_codes: np.ndarray, distinct: pa.Array,
                    accepted: np.ndarray) -> None:
    """Each accepted row's status, times, operator, cost (and recipient, when none was given) from the
    notification deciding its message's status. ``row_codes``: each row's id among ``distinct``."""
    latest = latest_per_message(callbacks, among=distinct)
    rows = np.flatnonzero((row_codes >= 0) & accepted)
    rows = rows[latest.rows[row_codes[rows]] >= 0]
    which = row_codes[rows]
    decided = latest.rows[which]  # the notification (row of the callbacks) that decides each hit's status
    # an intermediate notification (ACCEPTD, ...) leaves the message pending
    said = pd.Index(OUTCOME_STATUSES).get_indexer(latest.status.categories).astype(np.int8)
    said = np.append(said, -1)[latest.status.codes[which]]  # per hit; a code of -1 (no status) picks the -1
    joined.status[rows] = np.where(latest.is_final[which], said, _STATUS_CODE["PENDING"])
    joined.sent_at[rows] = utc_instants(callbacks["sent_at"].iloc[decided])
    reported_at = utc_instants(callbacks["reported_at"].iloc[decided])
    joined.delivered_at[rows] = np.where(said == _STATUS_CODE["DELIVRD"], reported_at, np.datetime64("NaT"))
    joined.billed[rows] = latest.billed[which]
    deciding = np.full(len(row_codes), -1)  # per row: its deciding notification's row in the callbacks (-1: none)
    deciding[rows] = decided
    joined.mnc = _texts_at(callbacks["mnc"], deciding)
    if joined.fill_recipients:
        hit = pa.array(deciding >= 0)
        joined.recipient = pc.if_else(hit, taken(text_chunks(callbacks["recipient"]), deciding), joined.recipient)


def _join_records(joined: _Joined, records: object, row_codes: np.ndarray, distinct: pa.Array) -> None:
    """Each row's click (and recipient, when none was given) from its message's record, and its sent, delivered
    and unsubscribed events: record events carry seconds, notifications only minutes, so the events win."""
    messages = getattr(records, "messages", None)
    events = getattr(records, "events", None)
    if messages is not None and not messages.empty:
        record_codes = codes_among(text_chunks(messages["id"]), distinct)
        first = np.full(len(distinct) + 1, len(record_codes))  # per id (and a last for none): its first record
        known = np.flatnonzero(record_codes >= 0)
        np.minimum.at(first, record_codes[known], known)
        found = first[row_codes]  # a code of -1 picks the last: none
        found[found == len(record_codes)] = -1
        if "is_clicked" in messages:
            said_clicked = messages["is_clicked"].astype("boolean").array
            joined.clicked = said_clicked.take(found, allow_fill=True, fill_value=False)
        if joined.fill_recipients and "recipient" in messages:
            joined.recipient = pc.coalesce(joined.recipient, taken(text_chunks(messages["recipient"]), found))
    if events is not None and not events.empty:
        dates = utc_instants(events["date"])
        kinds = pd.Categorical(events["type"])  # compared as codes: no Python string per event
        event_codes = codes_among(text_chunks(events["id"]), distinct)
        for kind, target in (("sent", joined.sent_at), ("delivered", joined.delivered_at)):
            has, earliest = _first_events(row_codes, event_codes, dates, kinds == kind)
            target[has] = earliest[has]
        # the sandbox's {UNSUB_URL} page adds an "unsubscribed" event to the message once confirmed
        joined.unsubscribed = _first_events(row_codes, event_codes, dates, kinds == "unsubscribed")[0]
        # a delivered event is as good as a DELIVRD notification
        pending = joined.status == _STATUS_CODE["PENDING"]
        joined.status[~np.isnat(joined.delivered_at) & pending] = _STATUS_CODE["DELIVRD"]


@keyword_checked
@dispatched("results", "callbacks")
def message_outcomes(
    results: pd.DataFrame,
    callbacks: pd.DataFrame | None = None,
    records: object | None = None,
    *,
    estimate: pd.DataFrame | None = None,
    recipients: pd.Series | None = None,
) -> pd.DataFrame:
    """Join send results, callbacks and records into one tidy row per recipient.

    ``results`` is the frame returned by ``send_sms`` and friends; ``callbacks`` the frame of
    ``read_callbacks``; ``records`` the value of ``fetch_records`` (its ``messages`` and ``events``);
    ``estimate`` the frame of ``msg.estimate`` (for ``estimated_cost``). The recipient is
    ``recipients`` when given (the numbers sent to, on the results' index), else the results'
    ``recipient`` column, else what callbacks or records say. Rows the service never got
    (``rejected``, ``not_sent``, ``dry_run`` and the ``skipped_*`` outcomes) have the status
    ``NOT_SENT``; their ``outcome`` says why. When the results are one campaign's, rows without a
    ``campaign_id`` (left out of the send) get that campaign's. ``clicked`` and ``unsubscribed`` come from
    the records (the record's ``isClicked``; an ``unsubscribed`` event: the recipient confirmed the
    message's ``{UNSUB_URL}`` page); without records they are False.
    Returns a new frame on the results' index with the columns of ``OUTCOME_COLUMNS``.

        >>> results = pd.DataFrame({"id": ["a1", None], "accepted": [True, False], "outcome": ["accepted", "rejected"]})
        >>> message_outcomes(results)[["status", "outcome"]].values.tolist()
        [['PENDING', 'accepted'], ['NOT_SENT', 'rejected']]
    """
    if recipients is None and "recipient" in results:
        recipients = results["recipient"]
    size = len(results)
    out = pd.DataFrame(index=results.index)

    def text(column: str) -> pd.Series:
        return as_string(results[column]) if column in results else pd.Series(pd.NA, results.index, "string")

    out["id"] = text("id")
    for column in ("campaign_id", "sending_id", "error_code", "parts"):
        out[column] = results[column].astype("Int64") if column in results else pd.Series(pd.NA, results.index, "Int64")
    campaigns = out["campaign_id"].dropna().unique()
    if len(campaigns) == 1:  # rows left out of a one-campaign send (skipped, not sent) still belong to its campaign
        out["campaign_id"] = out["campaign_id"].fillna(campaigns[0])
    if "outcome" in results:  # a send's categorical of outcomes is kept (codes shared): as text, 17 bytes a row
        kept = isinstance(results["outcome"].dtype, pd.CategoricalDtype)
        outcome = results["outcome"].copy(deep=False) if kept else text("outcome")
    else:
        outcome = results["accepted"].map({True: "accepted", False: "rejected"}).astype("string")
    out["outcome"] = outcome
    out["error_description"] = text("error_description")
    recipient = recipients.astype("string").reindex(results.index) if recipients is not None else text("recipient")

    # codes into OUTCOME_STATUSES (-1: a status outside them), not a Python string per row
    status = np.full(size, _STATUS_CODE["PENDING"], dtype=np.int8)
    status[_among(outcome, NOT_SENT_OUTCOMES)] = _STATUS_CODE["NOT_SENT"]  # refused, not attempted yet, or skipped
    status[_among(outcome, ["unknown"])] = _STATUS_CODE["UNKNOWN_OUTCOME"]
    joined = _Joined(status, recipient=text_array(recipient), fill_recipients=recipients is None)
    # the rows' ids hashed once: the callbacks, records and events are looked up among their distinct values
    row_ids = pc.dictionary_encode(text_array(out["id"]))
    row_codes = np.asarray(pc.fill_null(row_ids.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    if callbacks is not None and not callbacks.empty:
        _join_callbacks(joined, callbacks, row_codes, row_ids.dictionary, _among(outcome, ["accepted"]))
        # each id lookup's hash table (about 60 bytes per callback) leaves freed pages in malloc's heap that the
        # next phase would add to: handed back after each phase, the phases' leftovers no longer sum into the peak
        release_unused_memory()
    if records is not None:
        _join_records(joined, records, row_codes, row_ids.dictionary)
        release_unused_memory()  # as after the callbacks' phase
    del row_ids, row_codes

    out["recipient"] = string_series(joined.recipient, results.index)
    out["country"] = recipient_countries(out["recipient"])
    out["mnc"] = string_series(joined.mnc, results.index)
    out["status"] = pd.Categorical.from_codes(joined.status, dtype=STATUS_TYPE)
    out["sent_at"] = pd.Series(joined.sent_at, index=results.index).dt.tz_localize("UTC")
    out["delivered_at"] = pd.Series(joined.delivered_at, index=results.index).dt.tz_localize("UTC")
    out["seconds_to_delivery"] = (joined.delivered_at - joined.sent_at) / np.timedelta64(1, "s")
    out["clicked"] = joined.clicked
    out["unsubscribed"] = pd.array(joined.unsubscribed, dtype="boolean")
    out["estimated_cost"] = float("nan")
    if estimate is not None and "cost" in estimate:
        out["estimated_cost"] = estimate["cost"].reindex(results.index).astype(float)
    out["billed_cost"] = joined.billed
    return out[list(OUTCOME_COLUMNS)]


_JOINED_OPTIONS = inspect.signature(message_outcomes).parameters.keys()  # what outcomes passes on to message_outcomes


def outcomes(results: pd.DataFrame, callbacks: pd.DataFrame | None = None, records: object | None = None,
             contacts: pd.DataFrame | None = None, **options: Any) -> pd.DataFrame:
    """The per-recipient outcome table: one row per contact, on the contacts' index.

    ``results`` is the frame a send returned (on the contacts' index, with ``recipient`` and
    ``text``); ``callbacks`` the frame of ``read_callbacks`` (or ``Receiver.wait_for``);
    ``records`` the value of ``fetch_records``; ``options`` are those of ``message_outcomes``, which
    this is with the contacts joined (``estimate``, the frame of ``msg.estimate``; ``recipients``).
    The columns are those of ``message_outcomes`` (``outcome`` says what the send did: accepted,
    rejected, unknown, not_sent, dry_run or a ``skipped_*`` reason; ``status`` what became of the
    message), then ``text`` when the results carry it, then every column of ``contacts``, so any of
    them can group ``delivery_summary(..., by=...)``. A contact column named like an outcome
    column is kept as ``contact_<name>``. Contacts the results do not cover get an empty outcome.
    The split :func:`~sendframe.assign_variants` recorded on the contacts (or the results) is kept in
    ``attrs["sendframe.variants"]``, so :func:`~sendframe.compare_variants` can check it.

    >>> table = sendframe.outcomes(results, callbacks, records, contacts)  # doctest: +SKIP
    >>> table.groupby("segment")["status"].value_counts()  # doctest: +SKIP
    """
    check_options(options, [*_JOINED_OPTIONS, "contacts"], "outcomes")
    table = message_outcomes(results, callbacks, records, **options)
    for carried in ("text", "reason", "variant"):  # what the send result says of each row beyond the answer
        if carried in results:
            table[carried] = as_string(results[carried])
    split = (contacts.attrs if isinstance(contacts, pd.DataFrame) else {}).get(VARIANTS_ATTR) \
        or results.attrs.get(VARIANTS_ATTR)
    if split is not None:
        table.attrs[VARIANTS_ATTR] = split
    if contacts is not None:
        table = _with_contacts(table, results, contacts)
    release_unused_memory()
    return table


def _with_contacts(table: pd.DataFrame, results: pd.DataFrame, contacts: pd.DataFrame) -> pd.DataFrame:
    """The outcome table on the contacts' index, each contact's own columns beside it."""
    checked_contacts(contacts, "results cannot be matched to contacts (reset it before sending)",
                     what="the contact table the results were sent from")
    strangers = results.index.difference(contacts.index)
    if len(strangers):
        raise InputError(f"{len(strangers)} row(s) of the results are not rows of the contacts (index "
                         f"{strangers[:5].tolist()}); pass the contact table the results were sent from.")
    own = contacts.rename(columns={c: CONTACT_PREFIX + str(c) for c in contacts.columns if c in table.columns})
    joined = table.reindex(contacts.index).join(own)
    joined.attrs = dict(table.attrs)  # a join keeps attrs only when both sides' are equal
    return joined
