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

import pandas as pd

from sendframe.api.notifications import is_final_notification, notification_status
from sendframe.api.recipients import region_of
from sendframe.errors import InputError
from sendframe.campaign.policy import SKIP_OUTCOMES
from sendframe.options import keyword_checked
from sendframe.scale.callbacks import outcomes_partitions
from sendframe.scale.runtime import is_dask_frame

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

# the send result's outcomes that never reached the service: rows left out before sending (the send policy's
# skipped_* reasons, and a split test's holdout group)
SKIPPED_OUTCOMES: tuple[str, ...] = (*SKIP_OUTCOMES.values(), "holdout")
NOT_SENT_OUTCOMES = frozenset({"rejected", "not_sent", "dry_run", *SKIPPED_OUTCOMES})
CONTACT_PREFIX = "contact_"  # a contact column named like an outcome column gets it

OUTCOME_COLUMNS: tuple[str, ...] = (
    "id", "campaign_id", "sending_id", "recipient", "country", "mnc", "outcome", "error_code",
    "error_description", "status", "sent_at", "delivered_at", "seconds_to_delivery", "clicked",
    "parts", "estimated_cost", "billed_cost",
)


def operator_label(country: pd.Series, mnc: pd.Series) -> pd.Series:
    """The operator a message went through: country and MNC, since an MNC alone is only unique within a country.

    >>> operator_label(pd.Series(["ES", "GB", None]), pd.Series(["01", "01", "07"])).tolist()
    ['ES 01', 'GB 01', '? 07']
    """
    return country.astype("string").fillna("?") + " " + mnc.astype("string").fillna("?")


def final_status_per_message(callbacks: pd.DataFrame) -> pd.DataFrame:
    """One row per message id: its final status when one arrived, else its latest intermediate one.

    Arrival order does not matter: a final notification always wins over an intermediate one
    (``is_final_notification``: by its status, or by its delivery value when the status is missing).
    ``status`` is the status each notification stands for, so a notificationUrl with ``%d`` and
    no ``%s`` still gives DELIVRD, UNDELIV or REJECTD; ``is_final`` says whether it is final.

    >>> callbacks = pd.DataFrame({"id": ["a1", "a1"], "status": [None, None], "delivery": [1, 4],
    ...     "sent_at": pd.NaT, "reported_at": pd.to_datetime(["2026-01-01 10:01", "2026-01-01 10:05"], utc=True),
    ...     "cost": 0.05, "mnc": "01", "recipient": "34600123456", "part": 1})
    >>> final_status_per_message(callbacks)["status"].tolist()
    ['DELIVRD']
    """
    if callbacks is None or callbacks.empty:
        return pd.DataFrame(columns=["id", "status", "is_final", "sent_at", "reported_at", "billed_cost", "mnc",
                                     "recipient"])
    wanted = ["id", "status", "sent_at", "reported_at", "cost", "mnc", "recipient", "part"]
    frame = callbacks.loc[callbacks["id"].notna(), wanted].copy()
    delivery = callbacks.loc[frame.index, "delivery"] if "delivery" in callbacks else None
    frame["is_final"] = is_final_notification(frame["status"], delivery)
    frame["status"] = notification_status(frame["status"], delivery)
    frame = frame.sort_values(["id", "is_final", "reported_at"], kind="stable")
    last = frame.groupby("id", sort=False).tail(1).set_index("id")
    # a message is billed once, whatever the number of parts and notifications
    billed = frame.drop_duplicates(["id", "part"]).groupby("id")["cost"].max()
    out = last[["status", "is_final", "sent_at", "reported_at", "mnc", "recipient"]].assign(billed_cost=billed)
    return out.reset_index()


@keyword_checked
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
    ``estimate`` the frame of ``sendframe.estimate`` (for ``estimated_cost``). The recipient is
    ``recipients`` when given (the numbers sent to, on the results' index), else the results'
    ``recipient`` column, else what callbacks or records say. Rows the service never got
    (``rejected``, ``not_sent``, ``dry_run`` and the ``skipped_*`` outcomes) have the status
    ``NOT_SENT``; their ``outcome`` says why. When the results are one campaign's, rows without a
    ``campaign_id`` (left out of the send) get that campaign's.
    Returns a new frame on the results' index with the columns of ``OUTCOME_COLUMNS``.
    """
    if is_dask_frame(results) or is_dask_frame(callbacks):  # lazily, partitioned by id (sendframe.scale.callbacks)
        return outcomes_partitions(message_outcomes, results, callbacks, records=records, estimate=estimate,
                                   recipients=recipients)
    if recipients is None and "recipient" in results:
        recipients = results["recipient"]
    out = pd.DataFrame(index=results.index)

    def text(column: str) -> pd.Series:
        return results[column].astype("string") if column in results else pd.Series(pd.NA, results.index, "string")

    out["id"] = text("id")
    for column in ("campaign_id", "sending_id", "error_code", "parts"):
        out[column] = results[column].astype("Int64") if column in results else pd.Series(pd.NA, results.index, "Int64")
    campaigns = out["campaign_id"].dropna().unique()
    if len(campaigns) == 1:  # rows left out of a one-campaign send (skipped, not sent) still belong to its campaign
        out["campaign_id"] = out["campaign_id"].fillna(campaigns[0])
    if "outcome" in results:
        outcome = results["outcome"].astype("string")
    else:
        outcome = results["accepted"].map({True: "accepted", False: "rejected"}).astype("string")
    out["outcome"] = outcome
    out["error_description"] = text("error_description")
    out["recipient"] = recipients.astype("string") if recipients is not None else text("recipient")

    status = pd.Series("PENDING", index=results.index, dtype="string")
    status[outcome.isin(list(NOT_SENT_OUTCOMES)).fillna(False)] = "NOT_SENT"  # refused, not attempted yet, or skipped
    status[outcome.eq("unknown").fillna(False)] = "UNKNOWN_OUTCOME"
    sent_at = pd.Series(pd.NaT, index=results.index, dtype="datetime64[us, UTC]")
    delivered_at = sent_at.copy()
    mnc = pd.Series(pd.NA, index=results.index, dtype="string")
    billed = pd.Series(float("nan"), index=results.index)
    clicked = pd.Series(False, index=results.index, dtype="boolean")

    by_id = out["id"]
    if callbacks is not None and not callbacks.empty:
        finals = final_status_per_message(callbacks).set_index("id")
        hit = by_id.isin(finals.index) & outcome.eq("accepted").fillna(False)
        ids = by_id[hit]
        reported_status = finals.loc[ids, "status"]
        # an intermediate notification (ACCEPTD, ...) leaves the message pending
        status[hit] = reported_status.where(finals.loc[ids, "is_final"].to_numpy(dtype=bool), "PENDING").to_numpy()
        sent_at[hit] = pd.to_datetime(finals.loc[ids, "sent_at"], utc=True).to_numpy()
        delivered = reported_status.eq("DELIVRD").fillna(False).to_numpy(dtype=bool)
        reported = pd.to_datetime(finals.loc[ids, "reported_at"], utc=True).to_numpy()
        delivered_at[hit] = pd.Series(reported).where(delivered).to_numpy()
        mnc[hit] = finals.loc[ids, "mnc"].astype("string").to_numpy()
        billed[hit] = finals.loc[ids, "billed_cost"].astype(float).to_numpy()
        if recipients is None:
            out.loc[hit, "recipient"] = finals.loc[ids, "recipient"].astype("string").to_numpy()
    if records is not None:
        messages = getattr(records, "messages", None)
        events = getattr(records, "events", None)
        if messages is not None and not messages.empty:
            known = messages.drop_duplicates("id").set_index("id")
            hit = by_id.isin(known.index)
            if "is_clicked" in known:
                clicked[hit] = known.loc[by_id[hit], "is_clicked"].astype("boolean").to_numpy()
            if recipients is None and "recipient" in known:
                missing = hit & out["recipient"].isna()
                out.loc[missing, "recipient"] = known.loc[by_id[missing], "recipient"].astype("string").to_numpy()
        if events is not None and not events.empty:
            dates = events.assign(date=pd.to_datetime(events["date"], utc=True))
            # record events carry seconds, notifications only minutes: the events win where both exist
            for kind, target in (("sent", sent_at), ("delivered", delivered_at)):
                first = dates[dates["type"] == kind].groupby("id")["date"].min()
                hit = by_id.isin(first.index)
                target[hit] = first.loc[by_id[hit]].to_numpy()
            # a delivered event is as good as a DELIVRD notification
            status[delivered_at.notna() & (status == "PENDING")] = "DELIVRD"

    numbers = out["recipient"]
    uniques = numbers.dropna().unique()
    regions = {n: region_of(str(n)) for n in uniques}
    out["country"] = numbers.map(regions).astype("string")
    out["mnc"] = mnc
    out["status"] = pd.Categorical(status, categories=list(OUTCOME_STATUSES), ordered=True)
    out["sent_at"] = sent_at
    out["delivered_at"] = delivered_at
    out["seconds_to_delivery"] = (delivered_at - sent_at).dt.total_seconds()
    out["clicked"] = clicked
    out["estimated_cost"] = float("nan")
    if estimate is not None and "cost" in estimate:
        out["estimated_cost"] = estimate["cost"].reindex(results.index).astype(float)
    out["billed_cost"] = billed
    return out[list(OUTCOME_COLUMNS)]


@keyword_checked
def outcomes(
    results: pd.DataFrame,
    callbacks: pd.DataFrame | None = None,
    records: object | None = None,
    contacts: pd.DataFrame | None = None,
    *,
    estimate: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The per-recipient outcome table: one row per contact, on the contacts' index.

    ``results`` is the frame a send returned (on the contacts' index, with ``recipient`` and
    ``text``); ``callbacks`` the frame of ``read_callbacks`` (or ``Receiver.wait_for``);
    ``records`` the value of ``fetch_records``; ``estimate`` the frame of ``sendframe.estimate``.
    The columns are those of ``message_outcomes`` (``outcome`` says what the send did: accepted,
    rejected, unknown, not_sent, dry_run or a ``skipped_*`` reason; ``status`` what became of the
    message), then ``text`` when the results carry it, then every column of ``contacts``, so any of
    them can group ``delivery_summary(..., by=...)``. A contact column named like an outcome
    column is kept as ``contact_<name>``. Contacts the results do not cover get an empty outcome.

    >>> table = sendframe.outcomes(results, callbacks, records, contacts)  # doctest: +SKIP
    >>> table.groupby("segment")["status"].value_counts()  # doctest: +SKIP
    """
    table = message_outcomes(results, callbacks, records, estimate=estimate)
    for carried in ("text", "reason", "variant"):  # what the send result says of each row beyond the answer
        if carried in results:
            table[carried] = results[carried].astype("string")
    if contacts is None:
        return table
    if not isinstance(contacts, pd.DataFrame):
        raise InputError(f"contacts must be a DataFrame (the contact table the results were sent from), "
                         f"not {type(contacts).__name__}.")
    if not contacts.index.is_unique:
        repeated = contacts.index[contacts.index.duplicated()].unique()[:5].tolist()
        raise InputError(f"The contacts' index repeats labels ({repeated}), so results cannot be matched to "
                         "contacts; use contacts.reset_index(drop=True) before sending.")
    strangers = results.index.difference(contacts.index)
    if len(strangers):
        raise InputError(f"{len(strangers)} row(s) of the results are not rows of the contacts (index "
                         f"{strangers[:5].tolist()}); pass the contact table the results were sent from.")
    own = contacts.rename(columns={c: CONTACT_PREFIX + str(c) for c in contacts.columns if c in table.columns})
    return table.reindex(contacts.index).join(own)
