"""The durable runner of pending work: carrier steps from ``work`` and delivery notifications.

An asyncio task in the server's loop. Each round it applies every step that fell due (status,
flags, events, notification jobs) in one transaction, then sends the due notifications through
``state.notifier`` (failed ones retried after ``RETRY_DELAYS``). A real-clock sandbox on a database
file leaves the notifications to a notifier process of its own (``notifier_process``), started and
stopped with the worker and woken by each round. Everything lives in SQLite, so a new sandbox on
the same database resumes where the old one stopped.

    worker = Worker(state); await worker.start()   # in the server's lifespan
    await worker.advance(60)                       # manual clock: run all that falls due
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import operator
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from sendframe.errors import full_disk_error
from sendframe.sandbox import carrier, store
from sendframe.sandbox.notification_rounds import due_rows, next_notification_due, send_due_notifications
from sendframe.sandbox.notifier_process import NotifierProcess
from sendframe.sandbox.reports import moment_at, notification_urls, report_urls, second_at
from sendframe.sandbox.state import BUSY_WINDOW, DEFER_SLEEP, MAX_DEFERRAL, SandboxState, busy_pause

__all__ = ["Round", "Worker", "apply_step", "notification_urls", "plan_message", "plan_request"]

log = logging.getLogger("sendframe.sandbox.worker")

STEP_BATCH = 2000
ID_CHUNK = 2000  # message ids per IN (...) query
MESSAGE_MEMORY = 50_000  # messages a worker keeps in memory for their later steps (a few seconds of traffic)
_NOT_EVENTS = frozenset({"notify"})
_MESSAGE_COLUMNS = ("id", "channel", "sender", "recipient", "parts", "notification_url", "cost", "mnc",
                    "campaign_id", "sending_id", "scheduled_at", "created_at", "row_number", "sent_at")
_due_of = operator.itemgetter(0)
_SHARED_KEYS = ("channel", "sender", "notification_url", "scheduled_at", "created_at")
_MESSAGES_QUERY = f"SELECT {', '.join(_MESSAGE_COLUMNS)} FROM message_view WHERE id IN ({{marks}})"
_MESSAGE_RANGE_QUERY = f"SELECT {', '.join(_MESSAGE_COLUMNS)} FROM message_view WHERE row_number BETWEEN ? AND ?"
_STATUS_OF_KIND = {"sent": "SENT", "retry": "SENT"}
# what a round changes of its messages, by rowid: applying changes in order keeps the last status and mnc given,
# delivered once delivered, and the date of the first sent event
_PROGRESS = ("INSERT INTO message_progress (row, status, is_delivered, mnc, sent_at) "
             "SELECT value, ?2, ?3, ?4, ?5 FROM json_each(?1) WHERE true ON CONFLICT (row) DO UPDATE SET "
             "status = COALESCE(excluded.status, status), is_delivered = MAX(is_delivered, excluded.is_delivered), "
             "mnc = COALESCE(excluded.mnc, mnc), sent_at = COALESCE(sent_at, excluded.sent_at)")
# a plans row's payload (every message of a request) is read only once the round takes it (_take): a backlog of
# thousands of due plans rows, of which a round takes a few, would otherwise be read whole by every round
_DUE_WORK = ("SELECT seq, due, message_id, kind, CASE kind WHEN 'plans' THEN NULL ELSE payload END FROM work "
             "WHERE due <= ? ORDER BY due, seq LIMIT ?")
_PLANS_PAYLOAD = "SELECT payload FROM work WHERE seq = ?"


def _date(seconds: float) -> str:
    # dates have seconds precision and steps crowd into few seconds: convert each whole second once
    whole = int(seconds)
    if 0 <= seconds - whole < 0.9999994:  # fromtimestamp would not round the microseconds up to the next second
        return _second(whole)
    return store.iso(moment_at(seconds))


@functools.lru_cache(maxsize=4096)
def _second(whole: int) -> str:
    return store.iso(second_at(whole))


@dataclass
class Round:
    """What one round of due steps writes, in one transaction (:meth:`write`)."""

    events: list[tuple[Any, ...]] = field(default_factory=list)
    updates: list[tuple[Any, ...]] = field(default_factory=list)
    notes: list[tuple[Any, ...]] = field(default_factory=list)
    planned: list[tuple[Any, ...]] = field(default_factory=list)
    done: Counter[str] = field(default_factory=Counter)

    def write(self, db: Any, row_numbers: Mapping[str, int]) -> None:
        """Store events, message updates (of the messages by id in ``row_numbers``), notification jobs and
        planned steps (inside the caller's transaction)."""
        db.executemany("INSERT INTO events (message_id, type, date) VALUES (?, ?, ?)", self.events)
        sent = {message_id: date for message_id, kind, date in self.events if kind == "sent"}
        alike: dict[tuple[Any, ...], list[int]] = {}  # messages that change alike, updated in one statement
        costs = []
        for status, delivered, cost, mnc, message_id in _merged(self.updates):  # a sent step updates the status
            alike.setdefault((status, delivered, mnc, sent.get(message_id)), []).append(row_numbers[message_id])
            if cost is not None:
                costs.append((cost, row_numbers[message_id]))
        db.executemany(_PROGRESS, [(json.dumps(rows), *change) for change, rows in alike.items()])
        db.executemany("UPDATE messages SET cost = ? WHERE rowid = ?", costs)
        db.executemany("INSERT INTO notifications (message_id, url, next_at, created_at) VALUES (?, ?, ?, ?)",
                       self.notes)
        db.executemany("INSERT INTO work (due, message_id, kind, payload) VALUES (?, ?, ?, ?)", self.planned)


class _Step(NamedTuple):
    """A step as a round applies it: what its kind and payload imply, worked out once per distinct payload."""

    kind: str
    payload: dict[str, Any]
    new_status: str | None
    delivered: int
    event: bool
    counted: str


def _step(kind: str, payload: dict[str, Any]) -> _Step:
    status = payload.get("status")
    return _Step(kind, payload, status or _STATUS_OF_KIND.get(kind),
                 int(status == "DELIVRD" or kind in ("delivered", "answered")), kind not in _NOT_EVENTS, f"step_{kind}")


def apply_step(state: SandboxState, message: dict[str, Any], due: float, kind: str, payload: dict[str, Any],
               out: Round) -> None:
    """One due step of a message (a ``messages`` row as a dict plus ``sent_at``): its event, status,
    flags, cost and notification jobs, collected in ``out``."""
    _apply(state, message, due, _step(kind, payload), out)


def _apply(state: SandboxState, message: dict[str, Any], due: float, step: _Step, out: Round) -> None:
    kind = step.kind
    date = _date(due)
    if kind == "sent":
        message["sent_at"] = message["sent_at"] or moment_at(due)
    if step.event:
        out.events.append((message["id"], kind, date))
    cost = None
    if kind == "answered" and message["channel"] in ("voice", "voiceAudio"):
        cost = state.prices.message_cost(message["recipient"], message["channel"], answered=True)
        if cost is not None:
            message["cost"] = cost  # as the database will hold it (a remembered message is read again)
    if step.new_status or step.delivered or cost is not None:
        out.updates.append((step.new_status, step.delivered, cost, None, message["id"]))
    if kind == "notify" and message["notification_url"]:
        message_id = message["id"]
        out.notes.extend([(message_id, url, due, date) for url in report_urls(message, step.payload, due)])
    out.done[step.counted] += 1


def plan_message(state: SandboxState, message: dict[str, Any], arguments: dict[str, Any], moment: float,
                 out: Round) -> None:
    """Ask the carrier for the steps of one message (``arguments`` as queued by ``sending``, with its
    ``to`` and ``parts``): the steps already due at ``moment`` are applied at once, in plan order
    (nothing else of this message can come between them), and the rest become ``work`` rows in ``out``."""
    plan_request(state, {message["id"]: message},
                 {**arguments, "messages": [(message["id"], arguments["to"], arguments.get("parts", 1))]}, moment, out)


def plan_request(state: SandboxState, messages: dict[str, dict[str, Any]], arguments: dict[str, Any],
                 moment: float, out: Round) -> None:
    """:func:`plan_message` for every message of one ``plans`` row (``arguments`` as queued by ``sending``,
    ``arguments["messages"]`` the ``(id, to, parts)`` of each): what they share is read once. Messages
    missing from ``messages`` (deleted since) are skipped."""
    config = state.carrier
    expires_at = arguments.get("expires_at")
    ready, expires = _micros_at(arguments["ready_at"]), None if expires_at is None else _micros_at(expires_at)
    channel, windows = arguments["channel"], arguments.get("available_times")
    retries, amd = arguments.get("retries", 0), bool(arguments.get("amd"))
    plan_steps, mnc_for, updates, planned = carrier.plan_steps, carrier.mnc_for, out.updates, out.planned
    count = 0
    for message_id, to, parts in arguments["messages"]:
        message = messages.get(message_id)
        if message is None:
            continue
        steps = plan_steps(config, channel=channel, message_id=message_id, to=to, ready=ready, expires=expires,
                           parts=parts, retries=retries, amd=amd, available_times=windows)
        mnc = message["mnc"] = mnc_for(config, to)
        first_update = len(updates)
        inline = True  # the steps due already are applied in plan order
        group_due, group = None, []  # later steps with one due time share a work row (kind "group")
        for due_us, body in steps:
            due = due_us / 1_000_000
            if inline:
                if due <= moment:
                    _apply(state, message, due, _inline_step(body), out)
                    continue
                inline = False
            if due == group_due:
                group.append(body)
                continue
            if group:
                planned.append(_work_row(message_id, group_due, group))
            group_due, group = due, [body]
        if group:
            planned.append(_work_row(message_id, group_due, group))
        if len(updates) > first_update:  # the first update of a step already due also stores the mnc
            status, delivered, cost, _, _ = updates[first_update]
            updates[first_update] = (status, delivered, cost, mnc, message_id)
        else:
            updates.append((None, 0, None, mnc, message_id))
        count += 1
    if count:
        out.done["planned"] += count


@functools.lru_cache(maxsize=4096)
def _micros_at(seconds: float) -> int:
    # the epoch microseconds of moment_at(seconds) (a request's messages share their ready and expiry times)
    return carrier.micros_of(moment_at(seconds))


@functools.lru_cache(maxsize=1024)
def _inline_step(body: carrier.StepBody) -> _Step:
    # a step applied at once, as planned: apply_step reads only its status and delivery
    return _step(body[0], {"status": body[1], "delivery": body[2]})


def _take(db: Any, rows: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], dict[int, dict[str, Any]]]:
    """The first ``rows`` (in due order) that add up to about ``STEP_BATCH`` units of work, a ``plans`` row
    counting one unit per message, and the decoded payloads of their ``plans`` rows by ``seq`` (read here)."""
    plans: dict[int, dict[str, Any]] = {}
    units = 0
    for taken, (seq, _, _, kind, _) in enumerate(rows):
        if units >= STEP_BATCH:
            return rows[:taken], plans
        if kind == "plans":
            # orjson reads what json.loads reads, several times faster (long lists)
            plans[seq] = orjson.loads(db.execute(_PLANS_PAYLOAD, (seq,)).fetchone()[0])
            units += len(plans[seq]["messages"])
        else:
            units += 1
    return rows, plans


def _merged(updates: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One update per message: the same effect as applying ``updates`` in order (``status``, ``cost`` and
    ``mnc`` keep the last non-null value, ``is_delivered`` the largest)."""
    if len({update[4] for update in updates}) == len(updates):  # one each already (a round of plans only)
        return updates
    by_id: dict[str, tuple[Any, ...]] = {}
    for update in updates:
        message_id = update[4]
        before = by_id.get(message_id)
        if before is None:
            by_id[message_id] = update
            continue
        status, delivered, cost, mnc, _ = update
        by_id[message_id] = (status if status is not None else before[0], max(delivered, before[1]),
                             cost if cost is not None else before[2], mnc if mnc is not None else before[3], message_id)
    return list(by_id.values())


def _work_row(message_id: str, due: float | None, group: list[carrier.StepBody]) -> tuple[Any, ...]:
    if len(group) == 1:
        return (due, message_id, group[0][0], _payload_text(group[0]))
    return (due, message_id, "group", _group_text(tuple(group)))


@functools.lru_cache(maxsize=4096)
def _group_text(steps: tuple[carrier.StepBody, ...]) -> str:
    return json.dumps([{"kind": kind, "status": status, "delivery": delivery, "detail": dict(detail)}
                       for kind, status, delivery, detail in steps])


@functools.lru_cache(maxsize=4096)
def _steps_of(kind: str, payload_text: str) -> tuple[_Step, ...]:
    # a work row's steps (several for a "group" row): rows repeat a handful of payloads, decode each once (read only)
    payload = json.loads(payload_text or "{}")
    if kind == "group":
        return tuple(_step(step["kind"], step) for step in payload)
    return (_step(kind, payload),)


@functools.lru_cache(maxsize=4096)
def _payload_text(body: carrier.StepBody) -> str:
    # steps repeat a handful of (status, delivery, detail) combinations: encode each once
    _, status, delivery, detail = body
    return json.dumps({"status": status, "delivery": delivery, "detail": dict(detail)})


class Worker:
    """Runs due steps and notifications of one sandbox; see the module docstring."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._known: dict[str, dict[str, Any]] = {}  # message id -> the message as the last round left it
        self._notifier_process: NotifierProcess | None = None

    @property
    def notifier_pid(self) -> int | None:
        """The process id of the notifier process, or None when this worker sends the notifications itself."""
        return self._notifier_process.pid if self._notifier_process is not None else None

    async def start(self) -> None:
        """Start the background loop (call from the server's event loop), and the notifier process of a
        real-clock sandbox on a database file."""
        wake = self.state.wake = asyncio.Event()
        self.state.worker = self
        if self.state.clock.mode == "real" and store.is_file(self.state.db_path):
            networks = [str(network) for network in self.state.notifier.allow_networks]
            self._notifier_process = NotifierProcess(self.state.db_path, allow_networks=networks)
            self._notifier_process.start()
        self._task = asyncio.create_task(self._loop(wake), name="sendframe-sandbox-worker")

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold off the worker's rounds while the caller changes the database (``/_sandbox/reset``)."""
        async with self._lock:
            self._known.clear()
            yield

    async def stop(self) -> None:
        """Stop the background loop and the notifier process; pending work stays in the database."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._notifier_process is not None:
            await self._notifier_process.stop()

    async def _loop(self, wake: asyncio.Event) -> None:
        while True:
            try:
                started = time.monotonic()
                if await self._background_round():
                    # one batch at a time: requests get in between batches; while the API is busy, overdue work
                    # takes at most BUSY_SHARE of the loop
                    await asyncio.sleep(busy_pause(time.monotonic() - started) if self.busy() else 0)
                    continue
                if self.busy():
                    await asyncio.sleep(DEFER_SLEEP)
                    continue
                timeout = 1.0
                upcoming = self.next_due()
                if upcoming is not None and self.state.clock.mode == "real":
                    timeout = min(max(upcoming - self.state.clock.now().timestamp(), 0.0), 1.0)
                wake.clear()
                # not wait_for: on Python 3.11 it swallows a cancel (stop()) that comes as the wake is set
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(timeout, 0.005)):
                        await wake.wait()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # keep serving; the failure is logged, the work stays due
                full = full_disk_error(error, self.state.db_path, store.FULL_DISK_ADVICE)
                if full is not None:  # the round's transaction was rolled back whole: tried again, no traceback
                    log.error("sandbox worker: %s", full)
                else:
                    log.exception("sandbox worker round failed")
                await asyncio.sleep(0.5)

    def busy(self) -> bool:
        """Whether the API is busy accepting: a send request arrived within ``BUSY_WINDOW`` (real clock only)."""
        state = self.state
        return state.clock.mode == "real" and time.monotonic() - state.last_send < BUSY_WINDOW

    async def _background_round(self) -> Counter[str]:
        """One batch of due steps and one of due notifications; while :meth:`busy`, only work overdue by
        more than ``MAX_DEFERRAL`` (so accepting goes first, and delivery never starves)."""
        async with self._lock:
            moment = self.state.clock.now().timestamp()
            busy = self.busy()
            cutoff = moment - MAX_DEFERRAL if busy else moment
            done = self._apply_steps(moment, cutoff)
            process = self._notifier_process
            if process is not None:
                ended = process.restart_if_ended()
                if ended is not None:
                    log.error("the sandbox's notifier process ended (exit status %s): started again", ended)
                if done:
                    process.wake()
            done.update(await self._send_notifications(moment, cutoff=cutoff))
            return done

    def next_due(self) -> float | None:
        """The earliest due time (epoch seconds) of pending work, or of notifications this worker sends, or ``None``."""
        db = self.state.db
        step = db.execute("SELECT MIN(due) FROM work").fetchone()[0]
        note = next_notification_due(db) if self._notifier_process is None else None
        times = [t for t in (step, note) if t is not None]
        return min(times) if times else None

    async def run_due(self, at: float | None = None) -> Counter[str]:
        """Apply every step and send every notification due at ``at`` (default: now); return counts."""
        async with self._lock:
            return await self._run_due(at)

    async def _run_due(self, at: float | None, since: float | None = None) -> Counter[str]:
        done: Counter[str] = Counter()
        while True:
            moment = at if at is not None else self.state.clock.now().timestamp()
            steps = self._apply_steps(moment)
            sent = await self._send_notifications(moment, since)
            done.update(steps)
            done.update(sent)
            if not steps and not sent:
                return done

    async def advance(self, seconds: float) -> dict[str, Any]:
        """Move a manual clock by ``seconds`` and run everything that falls due on the way.

        Every step keeps its own due time (events, statuses and reports are dated by it, in due order
        per message), and a notification attempt counts as made at its due time (a failed one is retried
        ``RETRY_DELAYS`` after that), so the reports of many due times go out together, concurrently,
        instead of one stop per due time.
        """
        clock = self.state.clock
        async with self._lock:  # the background loop must not run a round with the clock half-way
            start = clock.now().timestamp()
            clock.advance(seconds)
            target = clock.now().timestamp()
            done = await self._run_due(target, since=start)
        return {"now": store.iso(clock.now()), "done": dict(done), "pending": self.pending()}

    def pending(self) -> dict[str, int]:
        """How much is still waiting: steps and notifications."""
        db = self.state.db
        steps = ("SELECT COALESCE(SUM(CASE kind WHEN 'group' THEN json_array_length(payload) "
                 "WHEN 'plans' THEN json_array_length(payload, '$.messages') ELSE 1 END), 0) FROM work")
        return {"steps": db.execute(steps).fetchone()[0],
                "notifications": db.execute("SELECT COUNT(*) FROM notifications WHERE state = 'pending'").fetchone()[0]}

    # ------------------------------------------------------------ steps

    def _apply_steps(self, moment: float, cutoff: float | None = None) -> Counter[str]:
        """Apply one batch of the steps due at ``cutoff`` (default ``moment``): about ``STEP_BATCH`` steps or
        messages to plan. A message planned here gets the steps due at ``moment`` applied at once."""
        db = self.state.db
        rows = due_rows(db, _DUE_WORK, moment if cutoff is None else cutoff, limit=STEP_BATCH)
        if not rows:
            return Counter()
        rows, plans = _take(db, rows)
        messages = self._messages({r[2] for r in rows if r[3] != "plans"}, plans.values())
        out = Round()
        for seq, due, message_id, kind, payload_text in rows:
            if kind == "plans":
                plan_request(self.state, messages, plans[seq], moment, out)
                continue
            message = messages.get(message_id)
            if message is None:
                continue
            for step in _steps_of(kind, payload_text):
                _apply(self.state, message, due, step, out)
        last_due, last_seq = rows[-1][1], rows[-1][0]
        # new rows in due order (stable: rows due together keep plan order), so the rows a later round takes
        # together lie together in the table too, and deleting them dirties few pages
        out.planned.sort(key=_due_of)
        with db:
            # the rows taken are exactly those up to the last one in (due, seq) order: nothing wrote to ``work``
            # since the SELECT (one connection, this synchronous call), and new rows are due after ``moment``
            db.execute("DELETE FROM work WHERE due < ? OR (due = ? AND seq <= ?)", (last_due, last_due, last_seq))
            out.write(db, {message_id: message["row_number"] for message_id, message in messages.items()})
        self._remember(messages)
        return out.done

    def _remember(self, messages: dict[str, dict[str, Any]]) -> None:
        """Keep the messages of a round (as the round left them) for their next steps; the oldest are
        forgotten past ``MESSAGE_MEMORY``, and read again from the database when a step of theirs comes."""
        known = self._known
        known.update(messages)
        if len(known) > MESSAGE_MEMORY:
            for message_id in list(itertools.islice(known, len(known) - MESSAGE_MEMORY // 2)):
                del known[message_id]

    def _messages(self, ids: Iterable[str], plans: Iterable[dict[str, Any]] = ()) -> dict[str, dict[str, Any]]:
        """The messages of ``ids`` and of the ``plans`` rows' payloads, as dicts: from this worker's memory or
        the database (a plan's messages by their range of rowids). What a step reads of a message changes only by
        this worker's own rounds (``mnc``, ``cost``, ``sent_at``), so a remembered message is what the database
        holds."""
        known = self._known
        out: dict[str, dict[str, Any]] = {}
        missing = []
        for message_id in ids:
            message = known.get(message_id)
            if message is None:
                missing.append(message_id)
            else:
                out[message_id] = message
        shared: dict[Any, Any] = {}  # the texts a request's messages share, held once
        for arguments in plans:
            self._read_messages(_MESSAGE_RANGE_QUERY, arguments["rows"], shared, out)
        for start in range(0, len(missing), ID_CHUNK):
            chunk = missing[start:start + ID_CHUNK]
            self._read_messages(_MESSAGES_QUERY.format(marks=",".join("?" * len(chunk))), chunk, shared, out)
        return out

    def _read_messages(self, query: str, params: Sequence[Any], shared: dict[Any, Any],
                       out: dict[str, dict[str, Any]]) -> None:
        for row in self.state.db.execute(query, params):
            message = dict(zip(_MESSAGE_COLUMNS, row, strict=True))
            for key in _SHARED_KEYS:
                message[key] = shared.setdefault(message[key], message[key])
            if message["sent_at"] is not None:
                message["sent_at"] = datetime.fromisoformat(message["sent_at"])
            out[row[0]] = message

    # ------------------------------------------------------------ notifications

    async def _send_notifications(self, moment: float, since: float | None = None,
                                  cutoff: float | None = None) -> Counter[str]:
        """One round of due reports (:func:`send_due_notifications`), unless the notifier process sends them."""
        if self._notifier_process is not None:
            return Counter()
        return await send_due_notifications(self.state.db, self.state.notifier, moment, since=since, cutoff=cutoff)
