"""The simulated carrier: a clock, per-country profiles and deterministic delivery plans.

Pure and HTTP-free. The app accepts a message, asks a ``plan_*`` function for its future, and the
worker runs each :class:`Step` when it falls due. A plan depends only on the carrier seed, the
message id and the arguments, never on Python's ``hash()`` or on the time it is computed:

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

The magic-number block 447700900000-447700900999 (Ofcom's drama range, never a real subscriber)
forces outcomes; see :data:`MAGIC_OUTCOMES` and docs/sandbox.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any, Literal

from sendframe.errors import ConfigurationError

__all__ = [
    "CarrierConfig",
    "Clock",
    "ClockMode",
    "Latency",
    "MAGIC_FIRST",
    "MAGIC_LAST",
    "MAGIC_OUTCOMES",
    "Profile",
    "RETRY_GAP",
    "Step",
    "magic_outcome",
    "mnc_for",
    "next_window_start",
    "plan_call",
    "plan_simple",
    "plan_sms",
]

ClockMode = Literal["real", "manual"]  # real: the wall clock; manual: moves only with Clock.advance
MAGIC_FIRST = 447700900000
MAGIC_LAST = 447700900999
RETRY_GAP = timedelta(minutes=10)  # a call retry comes strictly later than this after the attempt

# (first, last, outcome, meaning); the last three digits of the number pick the row
MAGIC_OUTCOMES: tuple[tuple[int, int, str, str], ...] = (
    (0, 99, "delivered_fast", "delivered: ACCEPTD after 0.1 s, DELIVRD/1 after 0.3 s; a call is answered"),
    (100, 199, "undelivered", "undelivered: UNDELIV/2; a call fails"),
    (200, 299, "rejected", "rejected by the operator: REJECTD/16; a call is rejected"),
    (300, 399, "never", "never delivered: EXPIRED/2 at expiry, or stays ACCEPTD without expiry; "
                        "a call is never placed"),
    (400, 499, "no_answer", "a call is never answered (retried up to `retries`); an SMS is delivered"),
    (500, 599, "machine", "a call is answered by a machine; an SMS is delivered"),
    (600, 699, "delivered_slow", "delivered after 60-120 s; a call is answered after 60-120 s"),
    (700, 999, "delivered", "delivered with the normal latency; a call is answered"),
)


def magic_outcome(to: str) -> str | None:
    """The forced outcome of a magic number, or None for every ordinary recipient.

    >>> magic_outcome("447700900150"), magic_outcome("34600000001")
    ('undelivered', None)
    """
    if not (len(to) == 12 and to.isdigit() and MAGIC_FIRST <= int(to) <= MAGIC_LAST):
        return None
    last = int(to) - MAGIC_FIRST
    return next(name for first, end, name, _ in MAGIC_OUTCOMES if first <= last <= end)


# --------------------------------------------------------------------------------------- clock
class Clock:
    """The sandbox's time: ``real`` (wall clock) or ``manual`` (moves only with :meth:`advance`).

    >>> clock = Clock("manual", start=datetime(2026, 1, 1, tzinfo=UTC))
    >>> clock.advance(90).isoformat()
    '2026-01-01T00:01:30+00:00'
    """

    def __init__(self, mode: ClockMode = "real", start: datetime | None = None) -> None:
        if mode not in ("real", "manual"):
            raise ValueError(f"Clock mode must be 'real' or 'manual', not {mode!r}.")
        if start is not None and mode == "real":
            raise ValueError("A real clock cannot start at a given time; use mode='manual'.")
        if start is not None and start.tzinfo is None:
            raise ValueError("Clock start must be timezone-aware (UTC), e.g. datetime(..., tzinfo=timezone.utc).")
        self.mode = mode
        self._lock = threading.Lock()
        self._now = (start or datetime.now(UTC)).astimezone(UTC)

    def now(self) -> datetime:
        """The current time, tz-aware UTC."""
        if self.mode == "real":
            return datetime.now(UTC)
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        """Move a manual clock forward by ``seconds`` (>= 0) and return the new time."""
        if self.mode != "manual":
            raise ValueError("Only a manual clock can be advanced; start the sandbox with clock='manual'.")
        if not seconds >= 0:
            raise ValueError(f"A clock only moves forward; got {seconds!r} seconds.")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now

    def __repr__(self) -> str:
        return f"Clock({self.mode!r}, now={self.now().isoformat()})"


# ------------------------------------------------------------------------------------ profiles
@dataclass(frozen=True)
class Latency:
    """A bounded lognormal delay in seconds: ``median * exp(sigma * N(0, 1))`` clipped to [low, high]."""

    median: float
    sigma: float = 0.5
    low: float = 0.0
    high: float = math.inf

    def __post_init__(self) -> None:
        if not (self.median > 0 and self.sigma >= 0 and 0 <= self.low <= self.high):
            raise ConfigurationError("A latency needs median > 0, sigma >= 0 and 0 <= low <= high (seconds); "
                                     f"got {self}.")

    def draw(self, rng: Draws) -> float:
        """One delay in seconds (``rng`` is anything with ``gauss()``, e.g. :class:`Draws`)."""
        return min(self.high, max(self.low, self.median * math.exp(self.sigma * rng.gauss(0.0, 1.0))))


@dataclass(frozen=True)
class Profile:
    """How one country's operators behave. Outcome rates must add up to at most 1 (the rest is delivered)."""

    name: str
    delivery_rate: float = 0.95
    undelivered_rate: float = 0.03
    rejected_rate: float = 0.02
    accepted_latency: Latency = Latency(0.2, 0.3, 0.1, 0.5)
    final_latency: Latency = Latency(1.2, 0.5, 0.5, 3.0)
    mncs: tuple[str, ...] = ()
    answer_rate: float = 0.7
    machine_rate: float = 0.15  # the rest of the calls are not answered
    ring_latency: Latency = Latency(1.0, 0.4, 0.3, 3.0)

    def __post_init__(self) -> None:
        rates = {"delivery_rate": self.delivery_rate, "undelivered_rate": self.undelivered_rate,
                 "rejected_rate": self.rejected_rate, "answer_rate": self.answer_rate,
                 "machine_rate": self.machine_rate}
        for name, value in rates.items():
            if not 0.0 <= value <= 1.0:
                raise ConfigurationError(f"Carrier profile {self.name!r}: {name} must be between 0 and 1, "
                                         f"not {value!r}.")
        if self.delivery_rate + self.undelivered_rate + self.rejected_rate > 1.0 + 1e-9:
            raise ConfigurationError(f"Carrier profile {self.name!r}: "
                                     "delivery_rate + undelivered_rate + rejected_rate exceed 1.")
        if self.answer_rate + self.machine_rate > 1.0 + 1e-9:
            raise ConfigurationError(f"Carrier profile {self.name!r}: answer_rate + machine_rate exceed 1.")
        if any(not (isinstance(m, str) and m.isdigit() and len(m) in (2, 3)) for m in self.mncs):
            raise ConfigurationError(f"Carrier profile {self.name!r}: each mnc must be a string of 2 or 3 digits, "
                                     'e.g. "01".')


def _profile(name: str, delivered: float, undelivered: float, mncs: tuple[str, ...]) -> Profile:
    return Profile(name, delivered, undelivered, round(1.0 - delivered - undelivered, 4), mncs=mncs)


_HEAD_CACHE_SIZE = 20_000

# calling-code prefix -> profile; "" is the default for every other country
DEFAULT_PROFILES: dict[str, Profile] = {
    "34": _profile("ES", 0.97, 0.02, ("01", "03", "04", "07")),
    "351": _profile("PT", 0.96, 0.03, ("01", "03", "06")),
    "44": _profile("GB", 0.97, 0.02, ("10", "15", "20", "30")),
    "1": _profile("US", 0.95, 0.03, ("260", "410")),
    "55": _profile("BR", 0.92, 0.05, ("02", "03", "04", "05", "06", "10", "11", "31")),
    "33": _profile("FR", 0.96, 0.03, ("01", "10", "15", "20")),
    "49": _profile("DE", 0.96, 0.03, ("01", "02", "03")),
    "52": _profile("MX", 0.93, 0.05, ("020", "030", "050")),
    "": _profile("default", 0.94, 0.04, ()),
}


@dataclass(frozen=True)
class CarrierConfig:
    """The carrier's seed and its profiles by calling-code prefix (``""`` = default, always present).

    >>> CarrierConfig.default(seed=3).profile_for("34600000001").name
    'ES'
    """

    seed: int = 0
    profiles: Mapping[str, Profile] = field(default_factory=lambda: dict(DEFAULT_PROFILES))
    # the profile of each 4-character head of a recipient seen so far (the match depends only on it)
    _by_head: dict[str, Profile] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        profiles = dict(self.profiles)
        profiles.setdefault("", DEFAULT_PROFILES[""])
        for prefix in profiles:
            if not (prefix == "" or prefix.isdigit()):
                raise ConfigurationError(f"Carrier profile prefix {prefix!r} must be a calling code made of digits.")
        object.__setattr__(self, "profiles", profiles)

    @classmethod
    def default(cls, seed: int = 0) -> CarrierConfig:
        """The built-in profiles with the given seed."""
        return cls(seed=seed)

    @classmethod
    def from_json(cls, path: str | os.PathLike[str], *, seed: int | None = None) -> CarrierConfig:
        """Load a config file (see docs/sandbox.md); its profiles replace or add to the built-in ones.

        ``{"seed": 7, "profiles": {"34": {"name": "ES", "delivery_rate": 0.9, "undelivered_rate": 0.1,
        "rejected_rate": 0, "final_latency": {"median": 2, "sigma": 0.4, "low": 0.5, "high": 5},
        "mncs": ["01"]}}}``. ``seed`` (when given) wins over the file's.
        """
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ConfigurationError(f"Cannot read the carrier config {str(path)!r}: {error}") from None
        if not isinstance(raw, dict):
            raise ConfigurationError(f"The carrier config {str(path)!r} must be a JSON object.")
        profiles = dict(DEFAULT_PROFILES) if raw.get("extend_defaults", True) else {}
        items = raw.get("profiles", {})
        if not isinstance(items, dict):
            raise ConfigurationError("carrier config: 'profiles' must be an object keyed by calling-code prefix.")
        for prefix, spec in items.items():
            profiles[str(prefix)] = _profile_from_dict(str(prefix), spec)
        file_seed = raw.get("seed", 0)
        if not isinstance(file_seed, int) or isinstance(file_seed, bool):
            raise ConfigurationError(f"carrier config: 'seed' must be an integer, not {file_seed!r}.")
        return cls(seed=file_seed if seed is None else seed, profiles=profiles)

    def profile_for(self, to: str) -> Profile:
        """The profile of the longest prefix matching the recipient (the default when none does)."""
        head = to[:4]
        profile = self._by_head.get(head)
        if profile is None:
            profile = next((self.profiles[head[:n]] for n in range(len(head), 0, -1) if head[:n] in self.profiles),
                           self.profiles[""])
            if len(self._by_head) >= _HEAD_CACHE_SIZE:  # email heads are unbounded; digit heads are not
                self._by_head.clear()
            self._by_head[head] = profile
        return profile


def _profile_from_dict(prefix: str, spec: Any) -> Profile:
    where = f"carrier config: profiles.{prefix or '(default)'}"
    if not isinstance(spec, dict):
        raise ConfigurationError(f"{where} must be an object.")
    known = {f.name for f in fields(Profile)}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ConfigurationError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}.")
    values: dict[str, Any] = {"name": spec.get("name", prefix or "default")}
    for key, value in spec.items():
        if key.endswith("_latency"):
            if not isinstance(value, dict) or "median" not in value or set(value) - {"median", "sigma", "low", "high"}:
                raise ConfigurationError(f"{where}.{key} must be an object with median and optional "
                                         "sigma, low, high (seconds).")
            try:
                values[key] = Latency(**{k: float(v) for k, v in value.items()})
            except (TypeError, ValueError, ConfigurationError) as error:
                raise ConfigurationError(f"{where}.{key}: {error}") from None
        elif key == "mncs":
            if not isinstance(value, list):
                raise ConfigurationError(f"{where}.mncs must be a list of strings such as [\"01\", \"03\"].")
            values[key] = tuple(value)
        elif key.endswith("_rate"):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ConfigurationError(f"{where}.{key} must be a number between 0 and 1, not {value!r}.")
            values[key] = float(value)
    return Profile(**values)


# --------------------------------------------------------------------------------- randomness
_WORDS = struct.Struct(">8Q")
_HALF_ULP = 2.0 ** -53
_TWO_PI = 2.0 * math.pi


class Draws:
    """The random numbers of one (seed, key, purpose), read straight from BLAKE2b digests.

    Each 64-byte digest (of the key and a block counter) gives eight 64-bit words, i.e. eight
    uniform draws; most plans need one digest, so no ``random.Random`` is built per message.
    Never Python's salted ``hash()``: the same inputs give the same draws on any machine.

        >>> config = CarrierConfig.default(seed=1)
        >>> Draws(config, "m1", "plan").random() == Draws(config, "m1", "plan").random()
        True
    """

    __slots__ = ("_key", "_block", "_words", "_index")

    def __init__(self, config: CarrierConfig, key: str, purpose: str) -> None:
        self._key = f"{config.seed}\x1f{key}\x1f{purpose}".encode()
        self._block = 0
        self._words: tuple[int, ...] = _WORDS.unpack(hashlib.blake2b(self._key, digest_size=64).digest())
        self._index = 0

    def random(self) -> float:
        """A uniform draw in [0, 1)."""
        if self._index == 8:
            self._block += 1
            self._words = _WORDS.unpack(hashlib.blake2b(self._key, digest_size=64,
                                                        salt=self._block.to_bytes(8, "big")).digest())
            self._index = 0
        word = self._words[self._index]
        self._index += 1
        return (word >> 11) * _HALF_ULP

    def uniform(self, low: float, high: float) -> float:
        """A uniform draw in [low, high)."""
        return low + (high - low) * self.random()

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        """A normal draw (Box-Muller over two uniform draws)."""
        radius = math.sqrt(-2.0 * math.log(1.0 - self.random()))
        return mu + sigma * radius * math.cos(_TWO_PI * self.random())


def mnc_for(config: CarrierConfig, to: str, message_id: str) -> str:
    """The operator MNC of a recipient ("" where the profile has none); stable per number and seed.

    >>> mnc_for(CarrierConfig.default(), "34600000001", "x" * 20) in ("01", "03", "04", "07")
    True
    """
    mncs = config.profile_for(to).mncs
    if not mncs:
        return ""
    digest = hashlib.blake2b(f"{config.seed}\x1f{to}\x1fmnc".encode(), digest_size=8).digest()
    return mncs[int.from_bytes(digest, "big") % len(mncs)]


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


def _final(due: datetime, kind: str, *, notify: bool, **detail: Any) -> list[Step]:
    status, delivery = FINAL[kind]
    steps = [Step(due, kind, status, delivery, detail)]  # ``**detail`` is already a new dict
    if notify:
        steps.append(Step(due, "notify", status, delivery))
    return steps


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


# ----------------------------------------------------------------------------------- planning
def _outcome(profile: Profile, to: str, draw: float) -> str:
    """The outcome of an SMS, email or WhatsApp message; ``draw`` is the plan's first uniform draw."""
    magic = magic_outcome(to)
    if magic is not None:
        return {"no_answer": "delivered", "machine": "delivered"}.get(magic, magic)
    if draw < profile.undelivered_rate:
        return "undelivered"
    if draw < profile.undelivered_rate + profile.rejected_rate:
        return "rejected"
    return "delivered"


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
    profile = config.profile_for(to)
    sent_at = next_window_start(ready_at, available_times)
    if expires_at is not None and sent_at > expires_at:
        return _final(max(expires_at, ready_at), "expired", notify=True, reason="not sent before expiry")
    rng = Draws(config, message_id, "plan")
    outcome = _outcome(profile, to, rng.random())
    accepted_delay = profile.accepted_latency.draw(rng)
    final_delay = profile.final_latency.draw(rng)
    if outcome == "delivered_fast":
        accepted_delay, final_delay = 0.1, 0.2
    elif outcome == "delivered_slow":
        final_delay = rng.uniform(60.0, 120.0) - accepted_delay
    accepted = sent_at + timedelta(seconds=accepted_delay)
    final = accepted + timedelta(seconds=final_delay)
    steps = [Step(sent_at, "sent", detail={"parts": parts})]
    if expires_at is None or accepted <= expires_at:
        steps.append(Step(accepted, "notify", "ACCEPTD", 4))
    if outcome == "never":
        return steps + (_final(expires_at, "expired", notify=True) if expires_at is not None else [])
    if expires_at is not None and final > expires_at:
        return steps + _final(expires_at, "expired", notify=True)
    kind = outcome if outcome in ("undelivered", "rejected") else "delivered"
    return steps + _final(final, kind, notify=True)


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
    profile = config.profile_for(to)
    magic = magic_outcome(to)
    rng = Draws(config, message_id, "call")
    attempt_at = next_window_start(ready_at, available_times)
    if magic == "never" or (expires_at is not None and attempt_at > expires_at):
        return _final(max(expires_at, ready_at), "expired", notify=False) if expires_at is not None else []
    if magic in ("undelivered", "rejected"):
        return [Step(attempt_at, "sent", detail={"attempt": 1})] + _final(
            attempt_at + timedelta(seconds=profile.ring_latency.draw(rng)), magic, notify=False)
    steps: list[Step] = []
    for attempt in range(1, retries + 2):
        steps.append(Step(attempt_at, "sent" if attempt == 1 else "retry", detail={"attempt": attempt}))
        ring = 0.3 if magic == "delivered_fast" else rng.uniform(60.0, 120.0) if magic == "delivered_slow" \
            else profile.ring_latency.draw(rng)
        ended = attempt_at + timedelta(seconds=ring)
        if expires_at is not None and ended > expires_at:
            return steps + _final(expires_at, "expired", notify=False)
        draw = rng.random()
        answer = {"no_answer": "no_answer", "machine": "machine"}.get(magic or "") or (
            "answered" if magic is not None or draw < profile.answer_rate
            else "machine" if draw < profile.answer_rate + profile.machine_rate else "no_answer")
        if answer == "machine" and amd:
            return steps + [Step(ended, "machine", detail={"attempt": attempt})] + _final(
                ended, "undelivered", notify=False, reason="answering machine")
        if answer in ("answered", "machine"):
            detail = {"attempt": attempt, "machine": answer == "machine"}
            return steps + [Step(ended, "answered", detail=detail)] + _final(ended, "delivered", notify=False)
        steps.append(Step(ended, "no_answer", detail={"attempt": attempt}))
        if attempt > retries:
            break
        jitter = timedelta(seconds=rng.uniform(1.0, 120.0))
        next_at = next_window_start(attempt_at + RETRY_GAP + jitter, available_times)
        attempt_at = max(next_at, ended)
        if expires_at is not None and attempt_at > expires_at:
            return steps + _final(expires_at, "expired", notify=False, reason="no retry before expiry")
    return steps + _final(steps[-1].due, "undelivered", notify=False, reason="not answered")


def plan_simple(config: CarrierConfig, *, message_id: str, channel: str, to: str, ready_at: datetime) -> list[Step]:
    """The future of an email or WhatsApp message: sent, then delivered / undelivered (no notifications).

    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> [s.kind for s in plan_simple(CarrierConfig(), message_id="e1", channel="whatsapp",
    ...  to="447700900150", ready_at=at)]
    ['sent', 'undelivered']
    """
    profile = config.profile_for(to) if channel != "mailing" and channel != "email" else config.profiles[""]
    rng = Draws(config, message_id, "plan")
    outcome = _outcome(profile, to, rng.random())
    if outcome == "never":
        return [Step(ready_at, "sent", detail={"channel": channel})]
    delay = {"delivered_fast": 0.3, "delivered_slow": rng.uniform(60.0, 120.0)}.get(
        outcome, profile.accepted_latency.draw(rng) + profile.final_latency.draw(rng))
    kind = outcome if outcome in ("undelivered", "rejected") else "delivered"
    return [Step(ready_at, "sent", detail={"channel": channel})] + _final(
        ready_at + timedelta(seconds=delay), kind, notify=False)
