"""The carrier's steps of a sandbox: planning a request's messages, and applying the steps that fell due.

A round (:meth:`StepRunner.apply`) takes about ``STEP_BATCH`` due rows of ``work`` (a ``plans`` row counting one
per message), asks the carrier for the steps of each new message (those due already applied at once), and
applies each due step: its event, status, flags, cost and notification jobs, all written in one transaction.
The worker runs rounds in the server's process, or a real-clock sandbox on a database file runs them in a
steps process of its own (``steps_process``).

    runner = StepRunner(state)
    runner.apply(time.time())    # Counter({'planned': 500, 'step_sent': 500, ...})
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol

import orjson

from sendframe.sandbox import carrier, store
from sendframe.sandbox.carrier import CarrierConfig
from sendframe.sandbox.notification_rounds import due_rows
from sendframe.sandbox.reports import moment_at, report_urls, second_at

__all__ = ["MESSAGE_MEMORY", "STEP_BATCH", "Round", "StepRunner", "StepState", "apply_step", "plan_message",
           "plan_request"]

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


class StepState(Protocol):
    """What rounds of steps read of a sandbox's state: its database, carrier configuration and price list. A
    :class:`~sendframe.sandbox.state.SandboxState` is one; the steps process holds only these."""

    db: sqlite3.Connection
    carrier: CarrierConfig
    prices: Any  # pricing.PriceTable


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


def apply_step(state: StepState, message: dict[str, Any], due: float, kind: str, payload: dict[str, Any],
               out: Round) -> None:
    """One due step of a message (a ``messages`` row as a dict plus ``sent_at``): its event, status,
    flags, cost and notification jobs, collected in ``out``."""
    _apply(state, message, due, _step(kind, payload), out)


def _apply(state: StepState, message: dict[str, Any], due: float, step: _Step, out: Round) -> None:
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


def plan_message(state: StepState, message: dict[str, Any], arguments: dict[str, Any], moment: float,
                 out: Round) -> None:
    """Ask the carrier for the steps of one message (``arguments`` as queued by ``sending``, with its
    ``to`` and ``parts``): the steps already due at ``moment`` are applied at once, in plan order
    (nothing else of this message can come between them), and the rest become ``work`` rows in ``out``."""
    plan_request(state, {message["id"]: message},
                 {**arguments, "messages": [(message["id"], arguments["to"], arguments.get("parts", 1))]}, moment, out)


def plan_request(state: StepState, messages: dict[str, dict[str, Any]], arguments: dict[str, Any],
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


class StepRunner:
    """Rounds of due steps on ``state.db``, with the messages of recent rounds kept in memory for their next steps
    (what a step reads of a message changes only by these rounds: one runner per database at a time)."""

    def __init__(self, state: StepState) -> None:
        self.state = state
        self._known: dict[str, dict[str, Any]] = {}  # message id -> the message as the last round left it

    def forget(self) -> None:
        """Forget the messages kept (the database changed under this runner: a reset)."""
        self._known.clear()

    def next_due(self) -> float | None:
        """The earliest due time (epoch seconds) of a pending step, or ``None``."""
        due: float | None = self.state.db.execute("SELECT MIN(due) FROM work").fetchone()[0]
        return due

    def apply(self, moment: float, cutoff: float | None = None) -> Counter[str]:
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
        last_due, last_seq, newest = rows[-1][1], rows[-1][0], max(row[0] for row in rows)
        # new rows in due order (stable: rows due together keep plan order), so the rows a later round takes
        # together lie together in the table too, and deleting them dirties few pages
        out.planned.sort(key=_due_of)
        with db:
            # the rows taken are exactly those up to the last one in (due, seq) order and no newer than the newest
            # taken: only this runner deletes from ``work``, and a row the API added since the SELECT (its due time
            # may be earlier: it read the clock before this round did) has a greater seq (AUTOINCREMENT)
            db.execute("DELETE FROM work WHERE (due < ? OR (due = ? AND seq <= ?)) AND seq <= ?",
                       (last_due, last_due, last_seq, newest))
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
