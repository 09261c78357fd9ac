"""The carrier's configuration: its clock, per-country profiles, magic numbers, random draws and mncs.

Pure and HTTP-free; :mod:`sendframe.sandbox.carrier` plans messages with it. A config is a seed plus
:class:`Profile` objects by calling-code prefix; each profile's numbers are also kept as a
:class:`ProfileTable` (plain attributes, sums precomputed), looked up once per recipient head:

    >>> config = CarrierConfig.default(seed=1)
    >>> config.table_for("34600000001").profile.name, config.table_for("34600000001").undelivered
    ('ES', 0.02)

Every draw depends only on the seed and its key (the message id or the number), never on Python's
``hash()`` or on the time it is computed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from sendframe.errors import ConfigurationError

__all__ = [
    "CarrierConfig",
    "Clock",
    "ClockMode",
    "DEFAULT_PROFILES",
    "DRAW_SCALE",
    "DRAW_WORDS",
    "Draws",
    "Latency",
    "MAGIC_FIRST",
    "MAGIC_LAST",
    "MAGIC_OUTCOMES",
    "Profile",
    "ProfileTable",
    "magic_outcome",
    "mnc_for",
]

ClockMode = Literal["real", "manual"]  # real: the wall clock; manual: moves only with Clock.advance
MAGIC_FIRST = 447700900000
MAGIC_LAST = 447700900999
_MAGIC_HEAD = str(MAGIC_FIRST)[:9]

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
    if to[:9] != _MAGIC_HEAD and to.isascii():  # most recipients: no int() (a non-ASCII digit may still match)
        return None
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
    # the profile table of each 4-character head of a recipient seen so far (the match depends only on it)
    _by_head: dict[str, ProfileTable] = field(default_factory=dict, init=False, repr=False, compare=False)
    seed_key: str = field(default="", init=False, repr=False, compare=False)  # "<seed>\x1f": every draw's key starts so

    def __post_init__(self) -> None:
        profiles = dict(self.profiles)
        profiles.setdefault("", DEFAULT_PROFILES[""])
        for prefix in profiles:
            if not (prefix == "" or prefix.isdigit()):
                raise ConfigurationError(f"Carrier profile prefix {prefix!r} must be a calling code made of digits.")
        object.__setattr__(self, "profiles", profiles)
        object.__setattr__(self, "seed_key", f"{self.seed}\x1f")

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
        return self.table_for(to).profile

    def table_for(self, to: str) -> ProfileTable:
        """The :class:`ProfileTable` of :meth:`profile_for`, cached per 4-character head of the recipient."""
        head = to[:4]
        table = self._by_head.get(head)
        if table is None:
            profile = next((self.profiles[head[:n]] for n in range(len(head), 0, -1) if head[:n] in self.profiles),
                           self.profiles[""])
            table = ProfileTable(profile)
            if len(self._by_head) >= _HEAD_CACHE_SIZE:  # email heads are unbounded; digit heads are not
                self._by_head.clear()
            self._by_head[head] = table
        return table


class ProfileTable:
    """A profile's numbers as plain attributes for the planner's inner loop (the same floats, sums made once).

    ``accepted``, ``final`` and ``ring`` are ``(median, sigma, low, high)`` of the latencies; ``undelivered``
    and ``not_delivered`` (undelivered + rejected), ``answer`` and ``answered`` (answer + machine) are the
    thresholds a uniform draw is compared with.
    """

    __slots__ = ("profile", "undelivered", "not_delivered", "answer", "answered", "accepted", "final", "ring",
                 "mncs")

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.undelivered = profile.undelivered_rate
        self.not_delivered = profile.undelivered_rate + profile.rejected_rate
        self.answer = profile.answer_rate
        self.answered = profile.answer_rate + profile.machine_rate
        self.accepted = _latency(profile.accepted_latency)
        self.final = _latency(profile.final_latency)
        self.ring = _latency(profile.ring_latency)
        self.mncs = profile.mncs


def _latency(latency: Latency) -> tuple[float, float, float, float]:
    return latency.median, latency.sigma, latency.low, latency.high


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
DRAW_WORDS = struct.Struct(">8Q")  # a 64-byte digest as eight 64-bit words, one uniform draw each
DRAW_SCALE = 2.0 ** -53  # a word's top 53 bits times this: a uniform draw in [0, 1)
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
        self._key = f"{config.seed_key}{key}\x1f{purpose}".encode()
        self._block = 0
        self._words: tuple[int, ...] = DRAW_WORDS.unpack(hashlib.blake2b(self._key, digest_size=64).digest())
        self._index = 0

    def random(self) -> float:
        """A uniform draw in [0, 1)."""
        if self._index == 8:
            self._block += 1
            self._words = DRAW_WORDS.unpack(hashlib.blake2b(self._key, digest_size=64,
                                                        salt=self._block.to_bytes(8, "big")).digest())
            self._index = 0
        word = self._words[self._index]
        self._index += 1
        return (word >> 11) * DRAW_SCALE

    def uniform(self, low: float, high: float) -> float:
        """A uniform draw in [low, high)."""
        return low + (high - low) * self.random()

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        """A normal draw (Box-Muller over two uniform draws)."""
        radius = math.sqrt(-2.0 * math.log(1.0 - self.random()))
        return mu + sigma * radius * math.cos(_TWO_PI * self.random())


def mnc_for(config: CarrierConfig, to: str, message_id: str = "") -> str:
    """The operator MNC of a recipient ("" where the profile has none); stable per number and seed
    (``message_id`` plays no part).

    >>> mnc_for(CarrierConfig.default(), "34600000001", "x" * 20) in ("01", "03", "04", "07")
    True
    """
    mncs = config.table_for(to).mncs
    if not mncs:
        return ""
    digest = hashlib.blake2b(f"{config.seed_key}{to}\x1fmnc".encode(), digest_size=8).digest()
    return mncs[int.from_bytes(digest, "big") % len(mncs)]
