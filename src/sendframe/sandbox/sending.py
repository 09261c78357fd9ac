"""Accepting send requests: validation, personalisation, parts, cost, planning, one insert per request.

No HTTP here (the routes in :mod:`sendframe.sandbox.app` call :func:`accept`). A request becomes
result items in recipient order plus, for the accepted ones, ``messages`` rows and one ``plans`` row
in ``work`` (the worker asks the carrier for their futures when they are ready), written in one
transaction with ``executemany``. A request refused as a whole raises :class:`~sendframe.errors.ApiError`
(code, description, HTTP status).

Every database step goes through ``on_loop``: a large request is accepted in a worker thread (its
rendering and sizing must not keep other clients waiting), and its database steps (links, OTP codes,
the final insert) then run on the event loop, which owns the connection.

Each channel has its handler in :mod:`sendframe.sandbox.sending_channels`; the pieces the handlers
share (the batch, ids, rendering, cost, rows) are in :mod:`sendframe.sandbox.sending_batch`.

    status, body = accept(state, DEMO_ACCOUNT, "sms", {"message": "Hi", "to": ["34600123456"], "from": "Shop"})
    # status == 202, body == {"campaignId": 1, "sendingId": 1, "result": [...]}
"""

from __future__ import annotations

from typing import Any

from sendframe.api.models import parse_request
from sendframe.errors import ErrorCode
from sendframe.sandbox import links, store
from sendframe.sandbox.accounts import Account
from sendframe.sandbox.sending_batch import (
    OnLoop,
    RequestBatch,
    RequestCommon,
    new_message_id,
    plans_row,
    refused_error,
    request_common,
    run_at_once,
)
from sendframe.sandbox.sending_channels import _HANDLERS, DEFAULT_VOICE_CALLER

__all__ = ["DEFAULT_VOICE_CALLER", "OnLoop", "accept", "new_message_id"]


_INSERT = ("INSERT INTO messages (id, recipient, message, parts, custom_fields, cost, sender, notification_url, extra, "
           "sending_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def _relinked(row: tuple[Any, ...], replaced: dict[str, str]) -> tuple[Any, ...]:
    """``row`` with each link another request took meanwhile (``{old: new}``, almost always empty) replaced."""
    if not replaced:
        return row
    out = []
    for value in row:
        if isinstance(value, str):
            for old, new in replaced.items():
                value = value.replace(old, new)
        out.append(value)
    return tuple(out)


def _store(state: Any, account: Account, channel: str, common: RequestCommon, batch: RequestBatch) -> tuple[int, int]:
    """Write the accepted messages and their plans row in one transaction; wake the worker. (campaign, sending)."""
    db = state.db
    with db:
        shared = common.shared or {}
        details = {**shared, "status": common.status, "scheduled_at": store.iso(common.scheduled),
                   "expires_at": store.iso(common.expires)}
        campaign_id, sending_id = store.campaign_and_sending(db, account.username, common.campaign_name,
                                                             channel=channel, tags=common.tags, now=common.now,
                                                             details=details)
        replaced = batch.links.store(db)
        db.executemany(_INSERT, [(*_relinked(row, replaced), sending_id) for row in batch.messages])
        last = db.execute("SELECT last_insert_rowid()").fetchone()[0]
        db.execute("INSERT INTO work (due, message_id, kind, payload) VALUES (?, ?, ?, ?)",
                   plans_row(batch, common, (last - len(batch.messages) + 1, last)))
    state.poke()
    return campaign_id, sending_id


def accept(state: Any, account: Account, channel: str, payload: object, *,
           on_loop: OnLoop[Any] = run_at_once) -> tuple[int, dict[str, Any]]:
    """Validate and store one send request; return (HTTP status, wire body).

    Raises :class:`~sendframe.errors.ApiError` (or ``RequestValidationError``) when the request is refused as a
    whole. ``on_loop`` runs each database step: at once by default; from a worker thread, the server passes
    ``anyio.from_thread.run_sync`` so the steps run on the event loop that owns the connection.
    """
    request = parse_request(channel, payload)
    common = request_common(state, account, request)
    common.on_loop = on_loop
    batch = RequestBatch(channel, links.NewLinks(state.public_url, common.now.isoformat(timespec="seconds")),
                         common.scheduled, common.expires)
    _HANDLERS[channel](common, request, batch)
    if not batch.messages:
        codes = {item["error"]["code"] for item in batch.items}
        code = codes.pop() if len(codes) == 1 else int(ErrorCode.INVALID_RECIPIENT)
        first = "; ".join(item["error"]["description"] for item in batch.items[:3])
        more = f" (and {len(batch.items) - 3} more)" if len(batch.items) > 3 else ""
        raise refused_error(code, f"No recipient was accepted: {first}{more}")
    campaign_id, sending_id = common.db(_store, state, account, channel, common, batch)
    status = 202 if len(batch.messages) == len(batch.items) else 207
    return status, {"campaignId": campaign_id, "sendingId": sending_id, "result": batch.items}
