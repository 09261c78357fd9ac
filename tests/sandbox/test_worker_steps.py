"""The worker's cheaper steps change nothing: report URLs byte for byte, memory versus database, round limits."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from types import SimpleNamespace
from urllib.parse import quote

from sendframe.api.notifications import ESCAPE_CODES, NOTIFICATION_DATE_FORMAT, substitute
from sendframe.pricing import load_prices
from sendframe.sandbox import sending, worker
from sendframe.sandbox.carrier import CarrierConfig
from sendframe.sandbox.state import SandboxState
from sendframe.sandbox.worker import STEP_BATCH, Worker

ALL = "http://127.0.0.1:9/dlr/t?" + "&".join(f"{c}=%{c}" for c in ESCAPE_CODES) + "&own=a%20b&x=%x"
SENDERS = ["Shop", None, "Tienda ñ & Co", "34600000000", "a/b?c"]
RECIPIENTS = ["447700900001", "34600000001", "user+tag@example.com", "+34 600"]
DUES = [1795253400.0, 1795253400.25, 1795253459.9999996, 1795253459.999999, 1795253519.5, 0.5]


def _reference(message: dict, payload: dict, due: float) -> list[str]:
    """The URLs as the worker filled them before templates: values by escape code, through substitute."""
    sent = message["sent_at"] or datetime.fromisoformat(message["scheduled_at"] or message["created_at"])
    values = {
        "i": message["id"], "d": "" if payload.get("delivery") is None else str(payload["delivery"]),
        "p": message["sender"] or "", "P": message["recipient"] or "",
        "t": sent.astimezone(UTC).strftime(NOTIFICATION_DATE_FORMAT),
        "y": datetime.fromtimestamp(due, UTC).strftime(NOTIFICATION_DATE_FORMAT),
        "c": f"{float(message['cost'] or 0.0):.4f}", "s": payload.get("status") or "",
        "m": message["mnc"] or "", "C": str(message["campaign_id"]), "S": str(message["sending_id"]),
    }
    template = message["notification_url"]
    if "%n" not in template:
        return [substitute(template, {**values, "n": "1"})]
    return [substitute(template, {**values, "n": str(n)}) for n in range(1, max(message["parts"], 1) + 1)]


def _message(number: int, url: str) -> dict:
    return {"id": f"{number:020x}", "channel": "sms", "sender": SENDERS[number % len(SENDERS)],
            "recipient": RECIPIENTS[number % len(RECIPIENTS)], "parts": number % 4, "notification_url": url,
            "cost": (None, 0.04, 0.123456, 1.0)[number % 4], "mnc": (None, "", "01", "260")[number % 4],
            "campaign_id": number % 7, "sending_id": 1000 + number,
            "scheduled_at": (None, "2026-11-21T09:30:00+00:00")[number % 2], "created_at": "2026-11-21T09:29:59+00:00",
            "row_number": number, "sent_at": (None, datetime(2026, 11, 21, 9, 31, 5, tzinfo=UTC))[number % 3 == 0]}


def test_every_report_url_is_byte_for_byte_what_substitute_gave():
    state = SimpleNamespace(carrier=CarrierConfig.default(), prices=load_prices())
    payloads = [{"status": "ACCEPTD", "delivery": 4}, {"status": "DELIVRD", "delivery": 1},
                {"status": "EXPIRED", "delivery": 2}, {"status": None, "delivery": None}]
    checked = 0
    # a campaign's per-row URLs (the toolkit's sf_row tag last) and last parameters that are cut or not
    tagged = (ALL + "&sf_row=", "http://x/p?sf_row=", "http://x/?a=%i&b=%&sf_row=", "http://x/?i=%i&n=%n&t=a%20b",
              "http://x/?i=%i&", "http://x/&i=%i?z", "?%s&")
    for url in (ALL, "http://x/?id=%i&s=%s", "http://x/%n/%n?t=%t&y=%y%%", "http://x/plain", *tagged):
        for number in range(60):
            message = _message(number, url + (f"r{number}" if url.endswith("sf_row=") else ""))
            for due in DUES:
                payload = payloads[number % len(payloads)]
                out = worker.Round()
                worker.apply_step(state, dict(message), due, "notify", payload, out)
                assert [note[1] for note in out.notes] == _reference(message, payload, due), (url, number, due)
                checked += len(out.notes)
    assert checked > 1000


def test_a_messages_later_reports_follow_its_changes_and_odd_urls():
    # the message's own values are filled once per message: a report after its cost, mnc or sent date changed
    # must show the new values; a URL holding control characters (the filler's marks) still comes out as written
    state = SimpleNamespace(carrier=CarrierConfig.default(), prices=load_prices())
    changes = [{}, {"cost": 0.5}, {"mnc": "07"}, {"sent_at": datetime(2026, 11, 21, 9, 40, tzinfo=UTC)}, {}]
    for url in (ALL, "http://x/\x00%s\x01%n?c=%c&m=%m&t=%t%C%%%d" + "".join(map(chr, range(2, 32))), "http://x/%y"):
        for number in range(12):
            message = _message(number, url)
            for step, change in enumerate(changes):
                message.update(change)
                payload = {"status": "ACCEPTD", "delivery": 4} if step % 2 else {"status": "DELIVRD", "delivery": 1}
                out = worker.Round()
                worker.apply_step(state, message, DUES[step], "notify", payload, out)
                expected = _reference({k: v for k, v in message.items() if k != "report_format"}, payload, DUES[step])
                assert [note[1] for note in out.notes] == expected, (url, number, step)


def test_notification_urls_fills_raw_values_as_substitute_does():
    values = {"i": "ab", "p": "Tienda ñ & Co", "t": "2026-11-21 09:30"}
    assert worker.notification_urls(ALL, values, 2) == [substitute(ALL, {**values, "n": n}) for n in ("1", "2")]
    assert quote("Tienda ñ & Co", safe="") in worker.notification_urls(ALL, values, 1)[0]


def _state_of(path: str) -> SandboxState:
    return SandboxState.create(db=path, clock="manual")


def _outcome(db: sqlite3.Connection) -> list:
    return [db.execute("SELECT message_id, url, next_at, created_at FROM notifications ORDER BY seq").fetchall(),
            db.execute("SELECT message_id, type, date FROM events ORDER BY seq").fetchall(),
            db.execute("SELECT id, status, is_delivered, cost, mnc FROM message_view ORDER BY row_number").fetchall()]


def test_a_worker_that_forgot_its_messages_writes_what_one_that_remembers_writes(tmp_path):
    first = _state_of(str(tmp_path / "a.sqlite"))
    to = [f"3460000{n:04d}" for n in range(300)] + [f"4477009000{n:02d}" for n in range(0, 100, 7)]
    sending.accept(first, first.accounts["demo"], "sms",
                   {"message": "x", "to": to, "from": "Shop", "notificationUrl": ALL})
    remembering = Worker(first)
    moment = first.clock.now().timestamp()
    remembering.steps.apply(moment)  # plans every message; the same database is then copied
    with sqlite3.connect(tmp_path / "b.sqlite") as copy:
        first.db.backup(copy)
    second = _state_of(str(tmp_path / "b.sqlite"))
    forgetting = Worker(second)
    for later in (0.3, 1.0, 2.0, 600.0):
        for each in (remembering, forgetting):
            while each.steps.apply(moment + later):
                pass
        forgetting.steps.forget()  # as after a restart: every message read from the database again
    assert _outcome(first.db) == _outcome(second.db)
    assert len(_outcome(first.db)[0]) == 2 * len(to)


def test_steps_due_together_beyond_one_round_are_each_applied_once_in_seq_order():
    async def scenario():
        state = SandboxState.create(clock="manual")
        worker_ = Worker(state)
        to = [f"44791{n:06d}" for n in range(STEP_BATCH + 500)]
        for start in range(0, len(to), 500):  # at most 1,000 recipients a request
            sending.accept(state, state.accounts["demo"], "sms",
                           {"message": "x", "to": to[start:start + 500], "from": "Shop"})
        moment = state.clock.now().timestamp()
        while worker_.steps.apply(moment):
            pass
        ids = [r[0] for r in state.db.execute("SELECT id FROM messages ORDER BY rowid")]
        with state.db:
            state.db.execute("DELETE FROM work")
            state.db.executemany("INSERT INTO work (due, message_id, kind, payload) VALUES (?, ?, 'expired', ?)",
                                 [(moment + 5, i, '{"status": "EXPIRED", "delivery": 2}') for i in ids])
        first = worker_.steps.apply(moment + 5)
        left = state.db.execute("SELECT COUNT(*) FROM work").fetchone()[0]
        second = worker_.steps.apply(moment + 5)
        events = [r[0] for r in state.db.execute("SELECT message_id FROM events WHERE type = 'expired' ORDER BY seq")]
        return ids, first, left, second, events

    ids, first, left, second, events = asyncio.run(scenario())
    assert first["step_expired"] == STEP_BATCH and left == 500 and second["step_expired"] == 500
    assert events == ids  # each once, in the order the rows were stored
