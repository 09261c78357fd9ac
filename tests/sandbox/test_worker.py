"""The worker: steps in time, delivery notifications with every escape code, per-part reports, retries."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import httpx
import pytest

from sendframe.sandbox import Sandbox, sending
from sendframe.sandbox.state import MAX_DEFERRAL, SandboxState
from sendframe.sandbox.worker import STEP_BATCH, Worker

from .notification_receiver import NotificationReceiver

ALL_CODES = "i=%i&d=%d&p=%p&P=%P&t=%t&c=%c&s=%s&m=%m&y=%y&n=%n&C=%C&S=%S&mine=42"


@pytest.fixture()
def sb():
    with Sandbox(clock="manual") as sandbox:
        yield sandbox


def post(sb, path, body):
    return httpx.post(f"{sb.base_url}{path}", json=body, auth=(sb.username, sb.api_password), timeout=30)


def test_every_escape_code_is_filled_in_the_notifications(sb):
    with NotificationReceiver() as receiver:
        body = post(sb, "/api/rest/sms", {"message": "Hi", "to": ["447700900001"], "from": "Shop",
                                          "notificationUrl": f"{receiver.url}?{ALL_CODES}"}).json()
        sb.advance(5)
    item = body["result"][0]
    assert [h["s"] for h in receiver.hits] == ["ACCEPTD", "DELIVRD"]
    assert [h["d"] for h in receiver.hits] == ["4", "1"]
    hit = receiver.hits[-1]
    assert hit["i"] == item["id"] and hit["p"] == "Shop" and hit["P"] == "447700900001"
    assert hit["C"] == str(body["campaignId"]) and hit["S"] == str(body["sendingId"])
    assert hit["n"] == "1" and hit["mine"] == "42"
    assert hit["c"] == "0.0400" or (len(hit["c"].split(".")[1]) == 4 and float(hit["c"]) > 0)
    for name in ("t", "y"):
        datetime.strptime(hit[name], "%Y-%m-%d %H:%M")
    row = sb.messages().iloc[0]
    assert hit["m"] == (row["mnc"] or "")
    assert float(hit["c"]) == pytest.approx(row["cost"])


def test_a_url_with_percent_n_gets_one_notification_per_part(sb):
    with NotificationReceiver() as receiver:
        post(sb, "/api/rest/sms", {"message": "x" * 300, "parts": 2, "to": ["447700900002"], "from": "Shop",
                                   "notificationUrl": f"{receiver.url}?n=%n&s=%s"})
        sb.advance(5)
    assert sorted((h["s"], h["n"]) for h in receiver.hits) == [("ACCEPTD", "1"), ("ACCEPTD", "2"),
                                                               ("DELIVRD", "1"), ("DELIVRD", "2")]


def test_per_recipient_notification_urls(sb):
    with NotificationReceiver() as receiver:
        post(sb, "/api/rest/sms", {"message": "x", "to": ["447700900003", "447700900004"], "from": "Shop",
                                   "notificationUrl": [f"{receiver.url}?who=a&s=%s", f"{receiver.url}?who=b&s=%s"]})
        sb.advance(5)
    assert sorted(h["who"] for h in receiver.hits if h["s"] == "DELIVRD") == ["a", "b"]


def test_a_failed_notification_is_retried_after_one_then_two_seconds(sb):
    with NotificationReceiver(fail_first=2) as receiver:
        post(sb, "/api/rest/sms", {"message": "x", "to": ["447700900300"], "from": "Shop",  # stays ACCEPTD
                                   "notificationUrl": f"{receiver.url}?s=%s"})
        sb.advance(0.5)
        assert len(receiver.hits) == 1
        sb.advance(1)
        assert len(receiver.hits) == 2
        sb.advance(1.5)
        assert len(receiver.hits) == 2
        sb.advance(1)
        assert len(receiver.hits) == 3
        sb.advance(100)
    assert len(receiver.hits) == 3


def test_undelivered_and_rejected_reports_carry_their_delivery_values(sb):
    with NotificationReceiver() as receiver:
        post(sb, "/api/rest/sms", {"message": "x", "to": ["447700900100", "447700900200"], "from": "Shop",
                                   "notificationUrl": f"{receiver.url}?P=%P&s=%s&d=%d"})
        sb.advance(600)
    finals = {h["P"]: (h["s"], h["d"]) for h in receiver.hits if h["s"] != "ACCEPTD"}
    assert finals == {"447700900100": ("UNDELIV", "2"), "447700900200": ("REJECTD", "16")}


def test_a_scheduled_sms_is_sent_at_its_time_and_expires_when_not_delivered(sb):
    start = datetime.now(UTC)
    schedule = (start + timedelta(hours=1)).strftime("%Y%m%d%H%M%S")
    expiry = (start + timedelta(hours=2)).strftime("%Y%m%d%H%M%S")
    item = post(sb, "/api/rest/sms", {"message": "x", "to": ["447700900300"], "from": "Shop",
                                      "scheduleDate": schedule, "expirationDate": expiry}).json()["result"][0]
    sb.advance(1800)
    row = sb.messages().iloc[0]
    assert row["status"] == "SCHEDULED" and row["events"] == []
    sb.advance(1800 + 60)
    assert [e["type"] for e in sb.messages().iloc[0]["events"]] == ["sent"]
    sb.advance(3600)
    row = sb.messages().iloc[0]
    assert row["id"] == item["id"] and row["status"] == "EXPIRED"
    assert [e["type"] for e in row["events"]] == ["sent", "expired"]
    assert row["events"][-1]["date"] == datetime.strptime(expiry, "%Y%m%d%H%M%S").replace(tzinfo=UTC).isoformat()


def test_unanswered_calls_are_retried_more_than_ten_minutes_apart(sb):
    post(sb, "/api/rest/voice", {"message": "Hola", "to": ["447700900400"], "language": "es_ES", "gender": "F",
                                 "retries": 3})
    sb.advance(3 * 3600)
    row = sb.messages().iloc[0]
    attempts = [datetime.fromisoformat(e["date"]) for e in row["events"] if e["type"] in ("sent", "retry")]
    assert len(attempts) == 4
    gaps = [(b - a).total_seconds() for a, b in pairwise(attempts)]
    assert all(gap > 600 for gap in gaps)
    assert row["status"] == "UNDELIV" and row["cost"] == 0


def test_email_and_whatsapp_reach_a_final_status_without_notifications(sb):
    post(sb, "/api/rest/mailing", {"to": ["ana@example.com"], "fromEmail": "news@example.org",
                                   "replyTo": "news@example.org", "subject": "s", "body": "<p>b</p>"})
    post(sb, "/api/rest/whatsapp", {"templateId": 1001, "from": "34911111111", "messages": [{"to": "447700900005"}]})
    sb.advance(600)
    frame = sb.messages()
    assert set(frame["channel"]) == {"mailing", "whatsapp"}
    # the email's outcome is drawn from its (random) message id: delivered 94 % of the time, so any final status
    assert frame.set_index("channel").loc["whatsapp", "status"] == "DELIVRD"  # 447700900005 is always delivered
    assert set(frame["status"]) <= {"DELIVRD", "UNDELIV", "REJECTD"}


def test_an_immediate_sms_is_planned_and_sent_in_the_request_that_accepts_it(sb):
    item = post(sb, "/api/rest/sms", {"message": "x", "to": ["34600000001"], "from": "Shop"}).json()["result"][0]
    row = sb.messages().iloc[0]  # the manual clock has not moved
    assert row["id"] == item["id"] and row["status"] == "SENT" and row["mnc"] in ("01", "03", "04", "07")
    assert [e["type"] for e in row["events"]] == ["sent"]
    sb.advance(10)
    assert sb.messages().iloc[0]["status"] in ("DELIVRD", "UNDELIV", "REJECTD")



def test_one_long_advance_keeps_the_retry_spacing_of_a_failing_notification(sb):
    with NotificationReceiver(fail_first=100) as receiver:
        post(sb, "/api/rest/sms", {"message": "x", "to": ["447700900300"], "from": "Shop",  # stays ACCEPTD
                                   "notificationUrl": f"{receiver.url}?s=%s"})
        done = sb.advance(64)["done"]  # ACCEPTD after 0.1-0.5 s, then retries 1, 2, 4, 8, 16, 32 s apart (63 s)
    assert len(receiver.hits) == 7 and done["notifications_failed"] == 1


@pytest.mark.parametrize("url", ["http://[2002:a9fe:a9fe::]/dlr?s=%s", "http://169.254.169.254/latest?s=%s",
                                 "http://10.1.2.3/dlr?s=%s"])
def test_a_destination_the_policy_refuses_is_tried_once_and_shown_failed_with_its_reason(sb, url):
    post(sb, "/api/rest/sms", {"message": "x", "to": ["447700900001"], "from": "Shop", "notificationUrl": url})
    done = sb.advance(120)["done"]
    assert done["notifications_failed"] == 2 and "notifications_retried" not in done  # ACCEPTD and DELIVRD
    notes = sb.messages().iloc[0]["notifications"]
    assert [(n["state"], n["attempts"]) for n in notes] == [("failed", 1), ("failed", 1)]
    assert all(n["last_error"].startswith("refused: ") and "address" in n["last_error"] for n in notes)


def _accept_one(state, to="447700900001"):
    return sending.accept(state, state.accounts["demo"], "sms", {"message": "x", "to": [to], "from": "Shop"})[1]


def test_a_busy_api_defers_the_carrier_until_the_work_is_overdue_by_the_bound():
    async def scenario():
        state = SandboxState.create(clock="real")
        worker = Worker(state)
        _accept_one(state)  # delivered_fast: its plans row is due at once
        state.last_send = time.monotonic()  # a send request just arrived
        plan_deferred = await worker._background_round()
        state.last_send = time.monotonic() - 1
        planned = await worker._background_round()  # sent at once; ACCEPTD and DELIVRD steps pending
        state.db.execute("UPDATE work SET due = due - 1")  # due, overdue by less than the bound
        state.last_send = time.monotonic()
        deferred = await worker._background_round()
        state.db.execute("UPDATE work SET due = due - ?", (MAX_DEFERRAL + 1,))
        overdue = await worker._background_round()
        return plan_deferred, planned, deferred, overdue, worker.pending()

    plan_deferred, planned, deferred, overdue, pending = asyncio.run(scenario())
    assert not plan_deferred and not deferred
    assert planned["planned"] == 1 and planned["step_sent"] == 1 and not planned["step_delivered"]
    assert overdue["step_notify"] == 2 and overdue["step_delivered"] == 1 and pending["steps"] == 0


def test_an_idle_api_gets_the_due_work_at_once():
    async def scenario():
        state = SandboxState.create(clock="real")
        worker = Worker(state)
        _accept_one(state)
        state.last_send = time.monotonic() - 1  # the last request was a second ago
        planned = await worker._background_round()
        state.db.execute("UPDATE work SET due = due - 1")
        return planned, await worker._background_round()

    planned, steps = asyncio.run(scenario())
    assert planned["planned"] == 1 and steps["step_delivered"] == 1


def test_a_manual_advance_finishes_all_due_work_even_while_requests_arrive():
    async def scenario():
        state = SandboxState.create(clock="manual")
        worker = Worker(state)
        _accept_one(state)
        state.last_send = time.monotonic()
        return await worker.advance(10)

    answer = asyncio.run(scenario())
    assert answer["pending"] == {"steps": 0, "notifications": 0} and answer["done"]["step_delivered"] == 1


def test_steps_due_together_share_one_work_row_and_still_count_and_run_in_plan_order():
    async def scenario():
        state = SandboxState.create(clock="manual")
        worker = Worker(state)
        _accept_one(state)  # delivered_fast: sent now; ACCEPTD after 0.1 s; delivered and DELIVRD together after 0.3 s
        planned = await worker.run_due()  # the request's plans row, due now
        rows = state.db.execute("SELECT kind FROM work ORDER BY due, seq").fetchall()
        before = worker.pending()
        answer = await worker.advance(1)
        events = [r[0] for r in state.db.execute("SELECT type FROM events ORDER BY seq")]
        return planned, rows, before, answer, events

    planned, rows, before, answer, events = asyncio.run(scenario())
    assert planned["planned"] == 1 and planned["step_sent"] == 1
    assert [r[0] for r in rows] == ["notify", "group"] and before["steps"] == 3
    assert answer["done"]["step_notify"] == 2 and answer["done"]["step_delivered"] == 1
    assert answer["pending"]["steps"] == 0
    assert events == ["sent", "delivered"]


def test_a_round_plans_about_step_batch_messages_however_the_requests_group_them():
    async def scenario():
        state = SandboxState.create(clock="manual")
        worker = Worker(state)
        size = STEP_BATCH // 2
        for request in range(3):
            to = [f"44791{request}{i:05d}" for i in range(size)]
            sending.accept(state, state.accounts["demo"], "sms", {"message": "x", "to": to, "from": "Shop"})
        moment = state.clock.now().timestamp()
        first, second, third = (worker.steps.apply(moment) for _ in range(3))
        statuses = dict(state.db.execute("SELECT status, COUNT(*) FROM message_view GROUP BY status").fetchall())
        return size, first, second, third, statuses

    size, first, second, third, statuses = asyncio.run(scenario())
    assert first["planned"] == 2 * size and second["planned"] == size and not third
    assert statuses == {"SENT": 3 * size}


def test_a_round_reads_the_plans_of_the_requests_it_takes_not_of_every_due_request():
    # a backlog of due requests (the worker holds off while the API is busy) must not be read whole by every round
    async def scenario():
        state = SandboxState.create(clock="manual")
        worker = Worker(state)
        for request in range(40):
            to = [f"4479{request:02d}{i:05d}" for i in range(STEP_BATCH // 4)]
            sending.accept(state, state.accounts["demo"], "sms", {"message": "x", "to": to, "from": "Shop"})
        payloads_read = []
        state.db.set_trace_callback(payloads_read.append)
        done = worker.steps.apply(state.clock.now().timestamp())
        state.db.set_trace_callback(None)
        return done, [q for q in payloads_read if "payload FROM work" in q]

    done, payload_queries = asyncio.run(scenario())
    assert done["planned"] == STEP_BATCH
    assert len(payload_queries) == 4  # the four requests planned, not the forty due


def test_a_round_reads_a_requests_messages_as_one_range_of_rows():
    async def scenario():
        state = SandboxState.create(clock="manual")
        worker = Worker(state)
        to = [f"447912{i:05d}" for i in range(300)]
        sending.accept(state, state.accounts["demo"], "sms", {"message": "x", "to": to, "from": "Shop"})
        queries = []
        state.db.set_trace_callback(queries.append)
        done = worker.steps.apply(state.clock.now().timestamp())
        state.db.set_trace_callback(None)
        recipients = [r[0] for r in state.db.execute("SELECT recipient FROM message_view WHERE status = 'SENT'")]
        return to, done, [q for q in queries if "FROM message_view" in q], recipients

    to, done, reads, recipients = asyncio.run(scenario())
    assert done["planned"] == 300 and sorted(recipients) == to
    assert len(reads) == 1 and "BETWEEN" in reads[0]
