"""Everything one running sandbox holds, in one object the routes reach as ``request.app.state.sandbox``.

    state = SandboxState.create(db=":memory:", clock="manual", seed=0)
    state.public_url = "http://127.0.0.1:8080"
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from typing import Any

from sendframe.errors import ConfigurationError, naming_full_disk
from sendframe.pricing import load_prices
from sendframe.sandbox import links, otp, store
from sendframe.sandbox.accounts import Account, build_accounts
from sendframe.sandbox.carrier import CarrierConfig, Clock, ClockMode
from sendframe.sandbox.notifier import Notifier

__all__ = ["BUSY_SHARE", "BUSY_WINDOW", "DEFER_SLEEP", "IDLE_WAIT", "MAX_DEFERRAL", "Faults", "SandboxState",
           "busy_pause", "busy_since", "carrier_config_of", "due_cutoff", "extra_schemas", "idle_wait",
           "quiet_collector"]

# back-pressure (real clock only): while send requests keep arriving the worker's steps (and the notifications it
# sends itself, without a notifier process) wait, within a bound
BUSY_WINDOW = 0.2  # s: a send request this recent means the API is busy
MAX_DEFERRAL = 5.0  # s: due work never waits longer than this, however busy the API
DEFER_SLEEP = 0.05  # s: how often a deferring worker (or notifier process) looks again
BUSY_SHARE = 0.25  # while the API is busy, overdue work takes at most this share of the time (docs/sandbox.md)
IDLE_WAIT = 1.0  # s: the longest an idle worker, steps process or notifier process waits without a wake-up
YOUNG_COLLECTION = 50_000  # new container objects between two young collections (Python's default: 700)


def busy_since(last_request: float) -> bool:
    """Whether the API counts as busy accepting: its latest send request (``time.monotonic()``) came within
    ``BUSY_WINDOW``.

        >>> busy_since(time.monotonic()), busy_since(float("-inf"))
        (True, False)
    """
    return time.monotonic() - last_request < BUSY_WINDOW


def due_cutoff(moment: float, busy: bool) -> float:
    """The due time up to which a round of steps takes work at ``moment``: while the API is busy, only work overdue
    by ``MAX_DEFERRAL``.

        >>> due_cutoff(100.0, busy=True), due_cutoff(100.0, busy=False)
        (95.0, 100.0)
    """
    return moment - MAX_DEFERRAL if busy else moment


def busy_pause(round_seconds: float) -> float:
    """How long to pause after a round of overdue work that took ``round_seconds`` while the API is busy, so
    such work takes at most ``BUSY_SHARE`` of the time (accepting goes first) and still goes on.

        >>> round(busy_pause(0.05), 3)
        0.15
    """
    return max(DEFER_SLEEP, round_seconds * (1 - BUSY_SHARE) / BUSY_SHARE)


def idle_wait(upcoming: float | None, now: float) -> float:
    """How long a runner with nothing due waits for a wake-up: until ``upcoming`` (the next due time, epoch
    seconds, or None), at most ``IDLE_WAIT`` (work due later is looked for again) and at least 5 ms.

        >>> idle_wait(None, 100.0), idle_wait(100.25, 100.0), idle_wait(99.0, 100.0)
        (1.0, 0.25, 0.005)
    """
    return IDLE_WAIT if upcoming is None else min(max(upcoming - now, 0.005), IDLE_WAIT)


def quiet_collector() -> None:
    """Set the garbage collector for a serving process, once its start-up is done: the objects built so far
    (modules, schemas, tables) are moved out of its sight for good (``gc.freeze``), and a young collection comes
    every ``YOUNG_COLLECTION`` new container objects. A round of carrier steps makes a few hundred thousand
    short-lived tuples (a send request: its models), freed by reference counting at its end; at Python's default
    every 700 of them started a collection of those rows, and now and then of every object of the process
    (bench_steps 40,000: 377 collections, 4-7% of the rounds' CPU; now one, 0.1%).

        >>> before = gc.get_threshold()
        >>> quiet_collector(); gc.get_threshold()[0] == YOUNG_COLLECTION
        True
        >>> gc.unfreeze(); gc.set_threshold(*before)  # as it was, for the tests that run next
    """
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])


@dataclass
class Faults:
    """Fault injection on ``/api/rest`` routes: answer ``status`` with probability ``rate``, wait ``delay_s``
    before answering, and drop the connection (after processing) with probability ``drop``."""

    status: int | None = None
    rate: float = 0.0
    delay_s: float = 0.0
    drop: float = 0.0
    retry_after: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The wire form shown by ``GET /_sandbox/faults``."""
        return {"status": self.status, "rate": self.rate, "delay_s": self.delay_s, "drop": self.drop,
                "retry_after": self.retry_after}


def carrier_config_of(config: Any, seed: int | None = None) -> CarrierConfig:
    """The carrier configuration from a ``CarrierConfig``, a config file path or ``None`` (built-in profiles);
    an explicit ``seed`` wins over the config's.

        >>> carrier_config_of(None, 3).seed
        3
    """
    if config is None:
        return CarrierConfig.default(seed or 0)
    if isinstance(config, CarrierConfig):
        return config if seed is None else replace(config, seed=seed)
    if isinstance(config, (str, PathLike)):
        return CarrierConfig.from_json(config, seed=seed)
    raise ConfigurationError("carrier_config must be a CarrierConfig or the path of a JSON file, "
                             f"not {type(config).__name__}.")


def extra_schemas() -> list[Any]:
    """The ``SCHEMA`` statements of the page modules (OTP codes, links), created at start-up."""
    return [otp.SCHEMA, links.SCHEMA]


@dataclass
class SandboxState:
    """The shared state: database, clock, carrier configuration, notifier, prices, accounts and faults."""

    db: sqlite3.Connection
    clock: Clock
    carrier: CarrierConfig
    notifier: Notifier
    prices: Any  # pricing.PriceTable
    accounts: Mapping[str, Account]
    public_url: str = "http://127.0.0.1"
    seed: int = 0
    faults: Faults | None = None
    wake: asyncio.Event | None = None
    db_path: str = ":memory:"  # the database file, named when its disk is full
    worker: Any = None  # worker.Worker, set when the server starts
    last_send: float = float("-inf")  # time.monotonic() of the latest send request (the worker's back-pressure)
    extra: list[Any] = field(default_factory=list)

    @classmethod
    def create(cls, *, db: str = ":memory:", clock: ClockMode = "real", seed: int | None = None,
               accounts: Iterable[Account | str] = (), ips: Iterable[str] = (), public_url: str = "http://127.0.0.1",
               allow_networks: Iterable[str] = (), carrier_config: Any = None) -> SandboxState:
        """Open (or create) the database and assemble the state.

        ``carrier_config`` is a :class:`~sendframe.sandbox.carrier.CarrierConfig` or the path of a JSON
        config file (docs/sandbox.md); ``seed``, when given, wins over its seed (default 0).
        ``allow_networks`` are the CIDR networks notifications may reach besides loopback.

            >>> state = SandboxState.create(clock="manual")
            >>> sorted(state.accounts)
            ['demo']
        """
        config = carrier_config_of(carrier_config, seed)
        try:
            notifier = Notifier(allow_loopback=True, allow_networks=tuple(allow_networks))
        except ValueError as error:
            raise ConfigurationError(f"{error} (--allow-callback-network)") from None
        extra = extra_schemas()
        with naming_full_disk(db, "the sandbox cannot start; free space and start it again."):
            connection = store.connect(db)
            try:
                store.create_schema(connection, extra)
            except BaseException:
                connection.close()
                raise
        return cls(
            db=connection,
            clock=Clock(clock),
            carrier=config,
            notifier=notifier,
            prices=load_prices(),
            accounts=build_accounts(accounts, ips),
            public_url=public_url,
            seed=config.seed,
            extra=extra,
            db_path=db,
        )

    def poke(self) -> None:
        """Wake the worker: new work was stored."""
        if self.wake is not None:
            self.wake.set()
