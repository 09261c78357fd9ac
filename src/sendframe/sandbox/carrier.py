"""The simulated carrier's plans: the deterministic future of each accepted message, as timed steps.

Pure and HTTP-free (its configuration, clock and draws live in :mod:`sendframe.sandbox.carrier_config`,
re-exported here). The app accepts a message, the worker asks for its future and runs each step when it
falls due. A plan depends only on the carrier seed, the message id and the arguments, never on Python's
``hash()`` or on the time it is computed:

    >>> from datetime import UTC, datetime
    >>> config = CarrierConfig.default(seed=1)
    >>> at = datetime(2026, 11, 21, 9, 30, tzinfo=UTC)
    >>> plan = plan_sms(config, message_id="a" * 20, to="447700900000", parts=1,
    ...                 ready_at=at, expires_at=None, available_times=None)
    >>> [(s.kind, s.status) for s in plan]
    [('sent', None), ('notify', 'ACCEPTD'), ('delivered', 'DELIVRD'), ('notify', 'DELIVRD')]

Step kinds. ``notify`` is a status report from the operator: the worker sets the message status and
sends the delivery notification(s) (``status`` / ``delivery`` are the ``%s`` / ``%d`` values). Every
other kind is an event of the message (``events.type``): ``sent``, ``delivered``, ``undelivered``,
``rejected``, ``expired``, ``answered``, ``machine``, ``no_answer`` and ``retry`` (a new call
attempt; ``detail["attempt"]``). Final event steps also carry the final ``status``/``delivery``, so
channels without notifications (voice, email, WhatsApp) get their status from them. Steps are in
due order; steps with the same due time must run in list order.

Two forms of the same plan. ``plan_sms`` / ``plan_call`` / ``plan_simple`` return :class:`Step` objects
with datetimes. The worker calls :func:`plan_steps`, which returns ``(due, body)`` pairs: ``due`` in
integer epoch microseconds, ``body`` a shared ``(kind, status, delivery, detail)`` tuple (``detail`` as
sorted items). Both are computed on integer microseconds, which is exactly what datetime arithmetic
gives (``datetime + timedelta(seconds=x)`` rounds ``x`` to the microsecond as :func:`delay_micros` does).

The magic-number block 447700900000-447700900999 (Ofcom's drama range, never a real subscriber)
forces outcomes; see :data:`MAGIC_OUTCOMES` and docs/sandbox.md.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sendframe.channels import channel as channel_info
from sendframe.sandbox.carrier_config import (
    DRAW_SCALE,
    DRAW_WORDS,
    MAGIC_FIRST,
    MAGIC_LAST,
    MAGIC_OUTCOMES,
    CarrierConfig,
    Clock,
    ClockMode,
    Draws,
    Latency,
    Profile,
    ProfileTable,
    magic_outcome,
    mnc_for,
)

__all__ = [
    "CarrierConfig",
    "Clock",
    "ClockMode",
    "Latency",
    "MAGIC_FIRST",
    "MAGIC_LAST",
    "MAGIC_OUTCOMES",
    "PlannedStep",
    "Profile",
    "RETRY_GAP",
    "Step",
    "StepBody",
    "delay_micros",
    "magic_outcome",
    "micros_of",
    "mnc_for",
    "next_window_start",
    "plan_call",
    "plan_simple",
    "plan_sms",
    "plan_steps",
]

RETRY_GAP = timedelta(minutes=10)  # a call retry comes strictly later than this after the attempt
_RETRY_GAP_US = RETRY_GAP // timedelta(microseconds=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)
_TWO_PI = 2.0 * math.pi
_blake2b = hashlib.blake2b

StepBody = tuple[str, "str | None", "int | None", tuple[tuple[str, "int | str"], ...]]
PlannedStep = tuple[int, StepBody]  # (due in epoch microseconds, body)


@dataclass(frozen=True)
class Step:
    """One thing that happens to a message at ``due`` (see the module docstring for the kinds)."""

    due: datetime
    kind: str
    status: str | None = None
    delivery: int | None = None
    detail: Mapping[str, int | str] = field(default_factory=dict)


FINAL = {"delivered": ("DELIVRD", 1), "undelivered": ("UNDELIV", 2),
         "expired": ("EXPIRED", 2), "rejected": ("REJECTD", 16)}
_REASONS = (None, "not sent before expiry", "answering machine", "not answered", "no retry before expiry")
# the bodies every plan shares: a final event (with or without a reason) and its report
_FINAL_BODY: dict[tuple[str, str | None], StepBody] = {
    (kind, reason): (kind, status, delivery, () if reason is None else (("reason", reason),))
    for kind, (status, delivery) in FINAL.items() for reason in _REASONS}
_NOTIFY_BODY: dict[str, StepBody] = {kind: ("notify", status, delivery, ())
                                     for kind, (status, delivery) in FINAL.items()}
_ACCEPTED_BODY: StepBody = ("notify", "ACCEPTD", 4, ())
_BODIES: dict[tuple[str, str, Any], StepBody] = {}  # (kind, detail key, value): the sent/attempt bodies
_SMS_MAGIC = {"no_answer": "delivered", "machine": "delivered"}


def _body(kind: str, key: str, value: Any) -> StepBody:
    body = _BODIES.get((kind, key, value))
    if body is None:
        body = _BODIES[(kind, key, value)] = (kind, None, None, ((key, value),))
    return body


def _final(due: int, kind: str, reason: str | None = None, *, notify: bool) -> list[PlannedStep]:
    if notify:
        return [(due, _FINAL_BODY[(kind, reason)]), (due, _NOTIFY_BODY[kind])]
    return [(due, _FINAL_BODY[(kind, reason)])]


# ------------------------------------------------------------------------------------ time
def delay_micros(seconds: float) -> int:
    """``timedelta(seconds=seconds)`` in whole microseconds, without building it (the same rounding:
    the fraction's microseconds rounded half to even on the total).

    >>> delay_micros(0.1), delay_micros(2.5e-6), delay_micros(3.5e-6)
    (100000, 2, 4)
    """
    fraction, whole = math.modf(seconds)
    rest, micro = math.modf(fraction * 1e6)
    total = int(whole) * 1_000_000 + int(micro)
    if rest > 0.5 or (rest == 0.5 and total & 1):
        return total + 1
    if rest < -0.5 or (rest == -0.5 and total & 1):
        return total - 1
    return total


def micros_of(moment: datetime) -> int:
    """A tz-aware datetime as integer epoch microseconds.

    >>> micros_of(datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=UTC))
    1000005
    """
    if moment.tzinfo is None:
        raise ValueError(f"Carrier times must be timezone-aware (UTC), not {moment!r}.")
    return (moment - _EPOCH) // _ONE_US


def _datetime_of(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


_FAST_US = delay_micros(0.1), delay_micros(0.2)  # magic delivered_fast: ACCEPTD after 0.1 s, final 0.2 s later


# ------------------------------------------------------------------------------------ windows
def _window_fields(window: Any) -> tuple[int | None, str, str]:
    if isinstance(window, Mapping):
        return window.get("day"), window.get("from", window.get("from_")), window["to"]
    return getattr(window, "day", None), window.from_, window.to


def _clock_time(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def next_window_start(at: datetime, available_times: Iterable[Any] | None) -> datetime:
    """``at`` if it falls inside a window, else the start of the next window (UTC; ``to`` < ``from`` wraps midnight).

    Windows are ``{"day": 1-7 | None, "from": "HH:MM", "to": "HH:MM"}`` dicts or ``AvailableTime``
    models; ``day`` is the weekday (Monday = 1) on which the window opens; ``from == to`` is a whole day.

    >>> next_window_start(datetime(2026, 11, 21, 23, 0, tzinfo=UTC), [{"from": "09:00", "to": "18:00"}])
    datetime.datetime(2026, 11, 22, 9, 0, tzinfo=datetime.timezone.utc)
    """
    windows = [_window_fields(w) for w in (available_times or ())]
    if not windows:
        return at
    at = at.astimezone(UTC)
    starts: list[datetime] = []
    for offset in range(-1, 9):
        day = (at + timedelta(days=offset)).date()
        for weekday, start_text, end_text in windows:
            if weekday is not None and day.isoweekday() != int(weekday):
                continue
            start = datetime.combine(day, _clock_time(start_text), UTC)
            end = datetime.combine(day, _clock_time(end_text), UTC)
            if end <= start:
                end += timedelta(days=1)
            if start <= at < end:
                return at
            if start > at:
                starts.append(start)
    return min(starts)


def _window_micros(at: int, available_times: Iterable[Any] | None) -> int:
    if not available_times:
        return at
    return micros_of(next_window_start(_datetime_of(at), available_times))


# ----------------------------------------------------------------------------------- planning
def _outcome(table: ProfileTable, to: str, draw: float) -> str:
    """The outcome of an SMS, email or WhatsApp message; ``draw`` is the plan's first uniform draw."""
    magic = magic_outcome(to)
    if magic is not None:
        return _SMS_MAGIC.get(magic, magic)
    if draw < table.undelivered:
        return "undelivered"
    if draw < table.not_delivered:
        return "rejected"
    return "delivered"


def _sms_steps(config: CarrierConfig, message_id: str, to: str, parts: Any, ready: int, expires: int | None,
               available_times: Iterable[Any] | None) -> list[PlannedStep]:
    # the first digest's eight draws, read in Draws' order: outcome, accepted (2), final (2), slow final (1)
    sent = _window_micros(ready, available_times) if available_times else ready
    if expires is not None and sent > expires:
        return _final(max(expires, ready), "expired", "not sent before expiry", notify=True)
    table = config.table_for(to)
    words = DRAW_WORDS.unpack(_blake2b(f"{config.seed_key}{message_id}\x1fplan".encode(), digest_size=64).digest())
    outcome = _outcome(table, to, (words[0] >> 11) * DRAW_SCALE)
    if outcome == "delivered_fast":
        accepted_us, final_us = _FAST_US
    else:
        median, sigma, low, high = table.accepted
        gauss = 0.0 + 1.0 * math.sqrt(-2.0 * math.log(1.0 - (words[1] >> 11) * DRAW_SCALE)) * math.cos(
            _TWO_PI * ((words[2] >> 11) * DRAW_SCALE))
        accepted_delay = median * math.exp(sigma * gauss)  # min(high, max(low, delay)), NaN and ties alike
        accepted_delay = accepted_delay if accepted_delay > low else low
        accepted_delay = accepted_delay if accepted_delay < high else high
        median, sigma, low, high = table.final
        gauss = 0.0 + 1.0 * math.sqrt(-2.0 * math.log(1.0 - (words[3] >> 11) * DRAW_SCALE)) * math.cos(
            _TWO_PI * ((words[4] >> 11) * DRAW_SCALE))
        final_delay = median * math.exp(sigma * gauss)
        final_delay = final_delay if final_delay > low else low
        final_delay = final_delay if final_delay < high else high
        if outcome == "delivered_slow":
            final_delay = (60.0 + 60.0 * ((words[5] >> 11) * DRAW_SCALE)) - accepted_delay
        accepted_us, final_us = delay_micros(accepted_delay), delay_micros(final_delay)
    accepted = sent + accepted_us
    final = accepted + final_us
    steps: list[PlannedStep] = [(sent, _body("sent", "parts", parts))]
    if expires is None or accepted <= expires:
        steps.append((accepted, _ACCEPTED_BODY))
    if outcome == "never":
        return steps + _final(expires, "expired", notify=True) if expires is not None else steps
    if expires is not None and final > expires:
        return steps + _final(expires, "expired", notify=True)
    kind = outcome if outcome in ("undelivered", "rejected") else "delivered"
    steps.append((final, _FINAL_BODY[(kind, None)]))
    steps.append((final, _NOTIFY_BODY[kind]))
    return steps


def _call_steps(config: CarrierConfig, message_id: str, to: str, ready: int, expires: int | None, retries: int,
                amd: bool, available_times: Iterable[Any] | None) -> list[PlannedStep]:
    table = config.table_for(to)
    ring_latency = table.profile.ring_latency
    magic = magic_outcome(to)
    rng = Draws(config, message_id, "call")
    attempt_at = _window_micros(ready, available_times)
    if magic == "never" or (expires is not None and attempt_at > expires):
        return _final(max(expires, ready), "expired", notify=False) if expires is not None else []
    if magic in ("undelivered", "rejected"):
        ended = attempt_at + delay_micros(ring_latency.draw(rng))
        return [(attempt_at, _body("sent", "attempt", 1)), *_final(ended, magic, notify=False)]
    steps: list[PlannedStep] = []
    for attempt in range(1, retries + 2):
        steps.append((attempt_at, _body("sent" if attempt == 1 else "retry", "attempt", attempt)))
        ring = 0.3 if magic == "delivered_fast" else rng.uniform(60.0, 120.0) if magic == "delivered_slow" \
            else ring_latency.draw(rng)
        ended = attempt_at + delay_micros(ring)
        if expires is not None and ended > expires:
            return steps + _final(expires, "expired", notify=False)
        draw = rng.random()
        answer = {"no_answer": "no_answer", "machine": "machine"}.get(magic or "") or (
            "answered" if magic is not None or draw < table.answer
            else "machine" if draw < table.answered else "no_answer")
        if answer == "machine" and amd:
            return steps + [(ended, _body("machine", "attempt", attempt)),
                            *_final(ended, "undelivered", "answering machine", notify=False)]
        if answer in ("answered", "machine"):
            body: StepBody = ("answered", None, None, (("attempt", attempt), ("machine", answer == "machine")))
            return steps + [(ended, body), *_final(ended, "delivered", notify=False)]
        steps.append((ended, _body("no_answer", "attempt", attempt)))
        if attempt > retries:
            break
        jitter = delay_micros(rng.uniform(1.0, 120.0))
        attempt_at = max(_window_micros(attempt_at + _RETRY_GAP_US + jitter, available_times), ended)
        if expires is not None and attempt_at > expires:
            return steps + _final(expires, "expired", "no retry before expiry", notify=False)
    return steps + _final(steps[-1][0], "undelivered", "not answered", notify=False)


def _simple_steps(config: CarrierConfig, message_id: str, channel: str, to: str, ready: int) -> list[PlannedStep]:
    table = config.table_for(to if channel not in ("mailing", "email") else "")
    profile = table.profile
    rng = Draws(config, message_id, "plan")
    outcome = _outcome(table, to, rng.random())
    sent: PlannedStep = (ready, _body("sent", "channel", channel))
    if outcome == "never":
        return [sent]
    slow = rng.uniform(60.0, 120.0)  # drawn whatever the outcome, then the usual latencies (the draws' order)
    usual = profile.accepted_latency.draw(rng) + profile.final_latency.draw(rng)
    delay = 0.3 if outcome == "delivered_fast" else slow if outcome == "delivered_slow" else usual
    kind = outcome if outcome in ("undelivered", "rejected") else "delivered"
    return [sent, *_final(ready + delay_micros(delay), kind, notify=False)]


def plan_steps(config: CarrierConfig, *, channel: str, message_id: str, to: str, ready: int, expires: int | None,
               parts: Any = 1, retries: int = 0, amd: bool = False,
               available_times: Iterable[Any] | None = None) -> list[PlannedStep]:
    """The plan of one message of any channel as ``(due, body)`` pairs, times in epoch microseconds
    (``ready`` = max(accepted time, scheduleDate); ``expires`` or None). SMS and landing SMS as
    :func:`plan_sms`, voice as :func:`plan_call`, every other channel as :func:`plan_simple`.

    >>> at = micros_of(datetime(2026, 1, 1, tzinfo=UTC))
    >>> [(due - at, body[0]) for due, body in plan_steps(CarrierConfig(), channel="sms", message_id="m1",
    ...  to="447700900000", ready=at, expires=None)]
    [(0, 'sent'), (100000, 'notify'), (300000, 'delivered'), (300000, 'notify')]
    """
    if channel_info(channel).sends_sms:
        return _sms_steps(config, message_id, to, parts, ready, expires, available_times)
    if channel in ("voice", "voiceAudio"):
        return _call_steps(config, message_id, to, ready, expires, retries, amd, available_times)
    return _simple_steps(config, message_id, channel, to, ready)


def _as_steps(planned: list[PlannedStep]) -> list[Step]:
    return [Step(_datetime_of(due), kind, status, delivery, dict(detail))
            for due, (kind, status, delivery, detail) in planned]


def plan_sms(config: CarrierConfig, *, message_id: str, to: str, parts: int, ready_at: datetime,
             expires_at: datetime | None, available_times: Iterable[Any] | None) -> list[Step]:
    """The future of an SMS (or landing SMS): sent, ACCEPTD, then the final report, with notify steps.

    ``ready_at`` = max(accepted time, scheduleDate). Sending waits for the next ``available_times``
    window; a final report that would come after ``expires_at`` becomes EXPIRED at ``expires_at``.

    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> [s.kind for s in plan_sms(CarrierConfig(), message_id="m1", to="447700900300", parts=1,
    ...  ready_at=at, expires_at=at + timedelta(hours=1), available_times=None)]
    ['sent', 'notify', 'expired', 'notify']
    """
    expires = None if expires_at is None else micros_of(expires_at)
    return _as_steps(_sms_steps(config, message_id, to, parts, micros_of(ready_at), expires, available_times))


def plan_call(config: CarrierConfig, *, message_id: str, to: str, ready_at: datetime, expires_at: datetime | None,
              retries: int, amd: bool, available_times: Iterable[Any] | None = None) -> list[Step]:
    """The future of a voice call: attempts, each answered / no answer / machine, and a final status.

    An unanswered attempt is retried strictly more than 10 minutes later (10 min + 1-120 s of
    queue), at most ``retries`` times, never after ``expires_at``. With ``amd`` a machine ends the
    call (``machine`` then UNDELIV); without it a machine counts as answered.

    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> [s.kind for s in plan_call(CarrierConfig(), message_id="c1", to="447700900400",
    ...  ready_at=at, expires_at=None, retries=1, amd=False)]
    ['sent', 'no_answer', 'retry', 'no_answer', 'undelivered']
    """
    expires = None if expires_at is None else micros_of(expires_at)
    return _as_steps(_call_steps(config, message_id, to, micros_of(ready_at), expires, retries, amd,
                                 available_times))


def plan_simple(config: CarrierConfig, *, message_id: str, channel: str, to: str, ready_at: datetime) -> list[Step]:
    """The future of an email or WhatsApp message: sent, then delivered / undelivered (no notifications).

    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> [s.kind for s in plan_simple(CarrierConfig(), message_id="e1", channel="whatsapp",
    ...  to="447700900150", ready_at=at)]
    ['sent', 'undelivered']
    """
    return _as_steps(_simple_steps(config, message_id, channel, to, micros_of(ready_at)))
