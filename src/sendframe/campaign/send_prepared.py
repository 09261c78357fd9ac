"""Send what a prepared frame lets through: nothing rendered, measured or checked again.

The :class:`~sendframe.campaign.prepared.Prepared` frame already holds each row's action, text,
encoding, parts, cost and send time; this module turns the rows to send into a
:class:`~sendframe.campaign.batching.CampaignSpec` (the wire models still validate each request) and
hands it to :func:`sendframe.campaign.send.send_rows`, then puts the answers beside the skipped rows.

    >>> import pandas as pd, sendframe
    >>> from sendframe.campaign.prepared import prepare
    >>> from sendframe.campaign.send_options import SendOptions
    >>> msg = sendframe.sms("Hi {name}", sender="Shop")
    >>> frame = pd.DataFrame({"phone": ["34600123456", "x"], "name": ["Jo", "Al"]})
    >>> send_prepared(prepare(msg, frame), SendOptions(dry_run=True, progress=False), warn=False)["outcome"].tolist()
    ['dry_run', 'skipped_invalid']
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sendframe.api.validation import format_wire_datetime
from sendframe.api.wire import user_stacklevel
from sendframe.campaign.batching import CampaignSpec
from sendframe.campaign.budget import Budget
from sendframe.campaign.policy import warn_skipped
from sendframe.campaign.prepared import Prepared
from sendframe.campaign.send import send_rows
from sendframe.campaign.send_options import SendOptions
from sendframe.campaign.settling import tags_from_callbacks
from sendframe.errors import RowsSkippedWarning
from sendframe.send_outcomes import OUTCOMES

__all__ = ["send_prepared"]


def send_prepared(prepared: Prepared, options: SendOptions, *, budget: Budget | None = None,
                  identity: Mapping[str, Any] | None = None, warn: bool = True) -> pd.DataFrame:
    """Send the rows ``prepared`` plans to send; one result row per contact (see :meth:`sendframe.Message.send`).

    ``warn``: say once which rows are skipped (a campaign of several messages says it for all of them);
    ``budget`` (default: one from ``options.max_cost``) and ``identity`` are shared by such a campaign.
    """
    msg, contacts, table = prepared.message, prepared.contacts, prepared.frame
    if warn:
        warn_skipped(table, options.dry_run)
    if budget is None and options.max_cost is not None:
        budget = Budget(options.max_cost, [])
    column = prepared.recipient_column
    sending = prepared.sent
    rows = table.loc[sending, [c for c in ("encoding", "cost", "send_at_utc", "parts") if c in table]]  # not the texts
    if "invalid" in prepared.keep:  # sent as written: the service answers for them (102)
        raw = f"{column}_raw"
        fallback = contacts[raw] if raw in contacts else pd.Series("", index=contacts.index)
        contacts = contacts.assign(**{column: contacts[column].fillna(fallback).fillna("")})
    row_fields: dict[str, Sequence[Any]] = {}
    if msg.encoding == "auto" and msg.info.sends_sms:
        row_fields["encoding"] = rows["encoding"].fillna("gsm").tolist()
    if budget is not None:
        budget.start(rows["cost"].to_numpy(dtype="float64", na_value=0.0))
    if "send_at_utc" in rows:
        moment = pd.Timestamp(prepared.moment)
        row_fields["scheduleDate"] = [format_wire_datetime(t.to_pydatetime()) if t > moment else None
                                      for t in rows["send_at_utc"]]
    fields: dict[str, Any] = dict(msg.fields)
    if msg.encoding not in (None, "auto"):
        fields["encoding"] = msg.encoding
    for wire_name, names in msg.whatsapp_columns.items():
        fields[msg.info.column_field_option(wire_name)] = tuple(names)
    spec = CampaignSpec.build(contacts, msg.channel, fields, to=column, notification_url=msg.notification_url,
                              row_fields=row_fields, rows=sending)
    parts = rows["parts"].fillna(1).to_numpy(dtype="int64") if msg.info.sends_sms else np.ones(len(rows), np.int64)
    sent = send_rows(spec, rows.index, options, parts=parts, budget=budget, identity=identity,
                     settle=tags_from_callbacks(options.callbacks, msg.notification_url))
    if budget is not None and budget.left_out:
        currency = table.attrs.get("currency", "")
        sent.loc[sent.index[budget.left_out], "reason"] = budget.reason(currency)
        warnings.warn(f"{len(budget.left_out)} row(s) not sent: {budget.reason(currency)}", RowsSkippedWarning,
                      stacklevel=user_stacklevel())
    return _result(table, sent)


def _result(table: pd.DataFrame, sent: pd.DataFrame) -> pd.DataFrame:
    """The answers of the rows sent beside the plan's outcome of the rows skipped, on the contacts' index."""
    result = sent.reindex(table.index)
    skipped = (table["action"] != "send").to_numpy()
    # as codes: through texts, a Python string per row (about 130 MiB at the peak of a million)
    categories = pd.Index(OUTCOMES)
    # get_indexer: -1 for a value that is no outcome ("send"), where a Categorical would warn
    outcome = np.where(skipped, categories.get_indexer(pd.Index(table["action"])),
                       categories.get_indexer(pd.Index(result["outcome"]))).astype(np.int8)
    sent_reason = result["reason"] if "reason" in result else pd.Series(pd.NA, index=table.index, dtype="str")
    result = result.assign(accepted=result["accepted"].mask(skipped, False),
                           outcome=pd.Categorical.from_codes(outcome, categories=categories),
                           reason=table["reason"].where(skipped, sent_reason))
    return pd.concat([table[["recipient", "text"]], result], axis=1)
