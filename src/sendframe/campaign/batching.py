"""From a contact frame to validated request batches, and the token bucket that paces them.

Pure functions apart from the bucket's clock: nothing here talks to the service.

    >>> import pandas as pd, sendframe
    >>> contacts = pd.DataFrame({"phone": ["447700900001", "447700900002"], "name": ["Ana", "Bo"]})
    >>> spec = CampaignSpec.build(contacts, sendframe.sms("Hi {name}", sender="Shop"))
    >>> [b.payload["sub"] for b in plan_batches(spec, [0, 1], batch_size=1, first_batch=1)]
    [[{'name': 'Ana'}], [{'name': 'Bo'}]]
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic.alias_generators import to_camel
from pydantic_core import to_json

from sendframe.api.models import parse_request
from sendframe.api.validation import format_wire_datetime
from sendframe.api.wire import EncodedRequest, wire_json
from sendframe.campaign.ledger_keys import row_keys, row_tag, tag_url
from sendframe.delivery.contact_table import checked_contacts
from sendframe.errors import InputError
from sendframe.options import request_field_names
from sendframe.text.templates import column_to_arrow

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["Batch", "CampaignSpec", "TokenBucket", "campaign_identity", "plan_batches", "wire_fields"]

Positions = Sequence[int] | np.ndarray  # rows of a spec by position: a list, a range or an integer array

# fields that make a campaign what it is: a ledger refuses to resume with different values
IDENTITY_FIELDS = ("message", "subject", "body", "templateId", "templateV2Id", "templateBody", "audioUrl",
                   "from", "fromEmail", "language", "gender")
_DATE_FIELDS = {"scheduleDate", "expirationDate"}


def campaign_identity(channel: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a ledger checks before resuming a campaign: the channel and its :data:`IDENTITY_FIELDS`.

        >>> campaign_identity("sms", {"message": "Hi", "from": "Shop", "parts": 2})
        {'channel': 'sms', 'message': 'Hi', 'from': 'Shop'}
    """
    return {"channel": channel, **{k: fields[k] for k in IDENTITY_FIELDS if k in fields}}


def wire_fields(fields: Mapping[str, Any], channel: str) -> dict[str, Any]:
    """Request fields of ``channel`` by their wire name (any spelling :func:`request_field_names` knows; another
    name in camelCase, as the models' aliases are made); dates as the wire writes them; ``None`` values dropped.

        >>> wire_fields({"sender": "Shop", "schedule_date": pd.Timestamp("2026-11-21 09:30", tz="UTC"), "parts": None},
        ...             "sms")
        {'from': 'Shop', 'scheduleDate': '20261121093000'}
    """
    names = request_field_names(channel)
    wire = {names.get(name) or to_camel(name): value for name, value in fields.items() if value is not None}
    # a naive datetime is refused by message() before it gets here
    return {key: format_wire_datetime(value) if key in _DATE_FIELDS and isinstance(value, datetime) else value
            for key, value in wire.items()}


@dataclass(frozen=True)
class CampaignSpec:
    """Everything a send needs, resolved once: wire fields, recipients, per-row variables.

    Per-row texts (recipients, ledger keys, variables, notificationUrls) stay Arrow arrays and become Python
    strings a batch at a time (a Python string per row held for the whole send was about 60 bytes a value more)."""
    channel: str
    fields: dict[str, Any]
    recipients: pa.Array
    keys: pa.Array
    sub_values: pa.Table
    """The values of the variables the template reads through ``sub``, a column each (whatsapp: none)."""
    notification_urls: pa.Array | None
    whatsapp_columns: dict[str, list[list[str | None]]]
    row_fields: dict[str, list[Any]] = field(default_factory=dict)
    """Request-wide fields that differ by row (``encoding`` under ``encoding="auto"``): batches group rows by them."""
    tagged_url: str | None = None
    """A notificationUrl ending in ``sf_row=``: each row's is it and the row's tag, made as its batch is (a URL
    string per row held for the whole send was about 170 bytes a recipient)."""

    @classmethod
    def build(cls, contacts: pd.DataFrame, msg: Message, *, to: str | None = None,
              row_fields: Mapping[str, Sequence[Any]] | None = None, rows: np.ndarray | None = None) -> CampaignSpec:
        """The requests of sending ``msg`` to ``contacts`` (``to``: the recipient column, default the message's);
        raises ``InputError`` naming a column the message reads that the contacts lack.

        ``rows``: send only the rows of this boolean mask (a prepared frame's rows to send): each column read is
        taken as it is read; an sms ``notificationUrl`` address is then sent as one URL per row carrying the row's
        tag (:func:`~sendframe.campaign.ledger_keys.tag_url`), so a notification names the row it is about.
        ``row_fields``: request fields by wire name whose value differs by row, one value per row sent.
        """
        checked_contacts(contacts, "the ledger keys rows by label")
        fields = wire_fields({**msg.fields, "encoding": None if msg.encoding == "auto" else msg.encoding}, msg.channel)
        column = to or msg.to or msg.info.recipient
        absent = [name for name in (column, *msg.variables) if name not in contacts.columns]
        if absent:
            raise InputError(f"The message reads {', '.join('{' + name + '}' for name in absent)} but the contacts "
                             f"have no such column; columns are: {', '.join(map(str, contacts.columns))}.")

        def values(series: pd.Series) -> pa.Array:
            return column_to_arrow(series if rows is None else series[rows])

        urls, tagged, url = None, None, msg.notification_url
        if url is not None and url in contacts.columns:
            if msg.channel != "sms":
                raise InputError(f"A per-recipient notificationUrl (column {url!r}) is only allowed "
                                 f"for sms; {msg.channel} takes one address for the whole request.")
            urls = values(contacts[url])
        elif url is not None and rows is not None and msg.channel == "sms":
            tagged = tag_url(url)
        elif url is not None:  # a channel without notifications has none: message() refuses it
            fields["notificationUrl"] = url
        # whatsapp fills its messages' arrays from columns; the other channels' templates read theirs through sub
        variables = () if msg.channel == "whatsapp" else msg.variables
        whatsapp = {wire: [list(row) for row in zip(*(values(contacts[c]).to_pylist() for c in columns), strict=True)]
                    for wire, columns in msg.whatsapp_columns.items()}
        per_row = {name: list(given) for name, given in (row_fields or {}).items()}
        index = contacts.index if rows is None else contacts.index[rows]
        return cls(msg.channel, {k: v for k, v in fields.items() if k not in per_row}, values(contacts[column]),
                   row_keys(index), pa.table({v: values(contacts[v]) for v in variables}), urls, whatsapp, per_row,
                   tagged)

    def payload(self, positions: Positions) -> dict[str, Any]:
        """The wire body sending to the rows at ``positions``."""
        return self.rows_payload(positions)[0]

    def rows_payload(self, positions: Positions) -> tuple[dict[str, Any], list[str], list[str]]:
        """(the wire body sending to the rows at ``positions``, their ledger keys, their recipients)."""
        take = _taker(positions)
        keys, recipients = take(self.keys), take(self.recipients)
        body = dict(self.fields)
        for wire_name, values in self.row_fields.items():  # one value per batch: plan_batches groups rows by it
            if len(positions):
                body[wire_name] = values[positions[0]]
        if self.channel == "whatsapp":  # a message per row, its fields' arrays from the row's columns
            body["messages"] = [{"to": recipient, **{wire: ["" if v is None else v for v in rows[i]]
                                                     for wire, rows in self.whatsapp_columns.items()}}
                                for i, recipient in zip(positions, recipients, strict=True)]
            return body, keys, recipients
        body["to"] = recipients
        if self.sub_values.num_columns:  # one dict per row, made by Arrow; a missing value is left out of its row's
            subs = take(self.sub_values)
            if any(column.null_count for column in self.sub_values.columns):
                subs = [sub if None not in sub.values() else {k: v for k, v in sub.items() if v is not None}
                        for sub in subs]
            body["sub"] = subs
        if self.notification_urls is not None:
            body["notificationUrl"] = [url or "" for url in take(self.notification_urls)]
        elif self.tagged_url is not None:
            body["notificationUrl"] = [self.tagged_url + row_tag(key, recipient)
                                       for key, recipient in zip(keys, recipients, strict=True)]
        return body, keys, recipients


def _taker(positions: Positions) -> Callable[[pa.Array | pa.Table], list[Any]]:
    """A function giving the values of an Arrow array (a table: its rows as dicts) at ``positions`` as Python objects
    (a slice when they are consecutive)."""
    at = np.asarray(positions, dtype=np.int64)
    if len(at) and (np.diff(at) == 1).all():
        start = int(at[0])
        return lambda values: values.slice(start, len(at)).to_pylist()
    indices = pa.array(at)
    return lambda values: values.take(indices).to_pylist()


@dataclass(frozen=True)
class Batch:
    """One request: its number, the rows it covers (a range or an array of positions) and its parts.

    Its body is built and validated when it is sent (:attr:`encoded`): the batches waiting to be sent
    hold no per-recipient object nor any request's bytes.
    """
    number: int
    positions: Positions
    parts: int
    spec: CampaignSpec = field(repr=False)
    as_built: bool = True
    """Whether the model's wire form is the body as built (checked on the first batch: batches differ only in
    per-row texts, which validation keeps as they are; shared fields the model normalises, such as dates or
    unknown names dropped, make every body the model's serialisation)."""

    def request(self) -> tuple[EncodedRequest, list[str], list[str]]:
        """(the request validated with the shared models, as the bytes sent; its rows' ledger keys; their
        recipients), built at each call: not kept. A broken rule raises ``RequestValidationError`` naming the field."""
        payload, keys, recipients = self.spec.rows_payload(self.positions)
        request = parse_request(self.spec.channel, payload)
        return EncodedRequest(self.spec.channel, to_json(payload) if self.as_built else wire_json(request)), keys, \
            recipients

    @property
    def encoded(self) -> EncodedRequest:
        """The request validated with the shared models, as the bytes sent (built at each call: not kept)."""
        return self.request()[0]

    @property
    def payload(self) -> dict[str, Any]:
        """The wire body, decoded from the bytes sent."""
        return self.encoded.payload()


def plan_batches(spec: CampaignSpec, positions: Positions, *, batch_size: int = 500, first_batch: int = 1,
                 parts: Positions | None = None) -> list[Batch]:
    """Split ``positions`` into batches numbered from ``first_batch``.

    The first request is validated with the shared models here, before anything is sent (a rule every batch
    breaks, such as a sender too long, is refused up front); each batch's own is validated as it is sent.
    """
    chunks = _chunks(spec, np.asarray(positions, dtype=np.int64), batch_size)
    if not chunks:
        return []
    payload = spec.payload(chunks[0])
    as_built = parse_request(spec.channel, payload).to_wire() == payload
    row_parts = np.ones(len(spec.keys), dtype=np.int64) if parts is None else np.asarray(parts, dtype=np.int64)
    return [Batch(first_batch + n, chunk, int(row_parts[chunk].sum()), spec, as_built)
            for n, chunk in enumerate(chunks)]


def _chunks(spec: CampaignSpec, at: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Positions ``at`` cut into requests of at most ``batch_size`` rows that share their per-row fields
    (groups in the order of their first row, rows in their order within a group)."""
    if not spec.row_fields:
        return [at[start:start + batch_size] for start in range(0, len(at), batch_size)]
    values = pd.DataFrame({name: np.asarray(column, dtype=object)[at] for name, column in spec.row_fields.items()})
    group = values.groupby(list(values), sort=False, dropna=False).ngroup().to_numpy()  # in order of first rows
    order = np.argsort(group, kind="stable")
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    return [members[start:start + batch_size] for members in np.split(at[order], bounds)
            for start in range(0, len(members), batch_size)]


class TokenBucket:
    """Paces work to ``rate`` units per second with bursts up to ``burst`` (default: one second's worth).

    A request larger than the burst is let through and paid for afterwards (the bucket goes into
    debt), so the average rate holds whatever the batch sizes.

        >>> bucket = TokenBucket(10, clock=lambda: 0.0)
        >>> bucket.reserve(10), bucket.reserve(5)
        (0.0, 0.5)
    """
    def __init__(self, rate: float, burst: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0:
            raise InputError(f"A rate limit must be positive, got {rate}.")
        self.rate = float(rate)
        self.burst = float(burst if burst is not None else max(1.0, rate))
        self._clock = clock
        self._tokens = self.burst
        self._last = clock()

    def reserve(self, amount: float) -> float:
        """Take ``amount`` tokens now; return how many seconds the caller must wait before using them."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        self._tokens -= amount
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait until ``amount`` tokens may be used."""
        await asyncio.sleep(self.reserve(amount))
