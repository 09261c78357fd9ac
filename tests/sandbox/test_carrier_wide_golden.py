"""Thousands of random plans: the carrier's futures and what the worker stores for them never change.

``carrier_wide_golden.json`` holds one short digest per case of everything a plan decides (due times to
the microsecond, kinds, statuses, deliveries, details, the mnc) and of what ``worker.plan_message``
collects for it at three moments (events, updates, notifications, ``work`` rows, counts, ``sent_at``). It
was recorded with the planner that built ``Step`` objects and added ``timedelta``s to datetimes, before
planning was rewritten on integer microseconds and per-profile tables. Where
``test_carrier_golden.py`` picks its cases by hand, these are drawn at random (a fixed seed) over
channels, recipients (every magic number range, many countries, emails), parts, ready times with
microseconds, expiry, windows, retries and answering machines, seeds and a custom profile config.
Regenerate only when a change of outcome is intended:

    SENDFRAME_REGEN_GOLDEN=1 .venv/bin/pytest tests/sandbox/test_carrier_wide_golden.py
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sendframe.sandbox.carrier import CarrierConfig, Latency, Profile, mnc_for

from .golden import WINDOWS as GOLDEN_WINDOWS
from .golden import assert_matches_golden, planned, stored

GOLDEN = Path(__file__).with_name("carrier_wide_golden.json")
CASES = 4000
PREFIXES = ["34", "351", "44", "1", "55", "33", "49", "52", "81", "971", "4477009", "3460"]
CHANNELS = ["sms", "sms", "sms", "landingsms", "voice", "voice", "voiceAudio", "whatsapp", "mailing", "email"]
EXPIRIES = [None, None, -5.0, 0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 1.3, 2.0, 4.0, 60.0, 90.0, 130.0, 599.0, 601.0,
            1250.0, 2500.0, 86400.0]
WINDOWS = [*GOLDEN_WINDOWS, [{"from": "00:00", "to": "00:20"}, {"from": "00:40", "to": "01:00"}]]
CUSTOM = {
    "34": Profile("ES-odd", 0.5, 0.3, 0.2, accepted_latency=Latency(0.05, 1.5, 0.0, 9.0),
                  final_latency=Latency(30.0, 2.0, 0.0), mncs=("01", "999"), answer_rate=0.2, machine_rate=0.5,
                  ring_latency=Latency(200.0, 1.0, 1.0, 900.0)),
    "44": Profile("GB-sure", 1.0, 0.0, 0.0, mncs=("10",), answer_rate=0.0, machine_rate=0.0),
    "": Profile("none", 0.0, 0.0, 1.0, answer_rate=1.0, machine_rate=0.0),
}
_CONFIGS = {"0": CarrierConfig.default(seed=0), "7": CarrierConfig.default(seed=7),
            "123456789": CarrierConfig.default(seed=123456789), "custom": CarrierConfig(seed=5, profiles=CUSTOM)}


def _recipient(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return str(447700900000 + rng.randrange(1000))
    if roll < 0.9:
        prefix = rng.choice(PREFIXES)
        return prefix + "".join(rng.choice("0123456789") for _ in range(rng.randint(9, 13) - len(prefix)))
    return f"user{rng.randrange(10_000)}@example.{rng.choice(['com', 'es', 'co.uk'])}"


def _cases() -> Iterator[tuple[str, dict[str, Any]]]:
    rng = random.Random(20261121)
    for number in range(CASES):
        channel = rng.choice(CHANNELS)
        config = rng.choice(list(_CONFIGS))
        ready = rng.uniform(1.77e9, 1.80e9)
        if rng.random() < 0.2:
            ready = float(round(ready))
        elif rng.random() < 0.1:
            ready = round(ready) - rng.choice([1e-7, 4e-7, 5e-7, 6e-7])  # rounds to the microsecond either way
        expiry = rng.choice(EXPIRIES)
        case: dict[str, Any] = dict(channel=channel, config=config, message_id=f"{rng.getrandbits(80):020x}",
                                    to=_recipient(rng), ready_at=ready,
                                    expires_at=None if expiry is None else ready + expiry * rng.uniform(0.5, 1.5))
        if channel in ("sms", "landingsms"):
            case.update(parts=rng.randint(1, 4), available_times=rng.choice(WINDOWS) if rng.random() < 0.3 else None)
        elif channel in ("voice", "voiceAudio"):
            case.update(retries=rng.choice([0, 0, 1, 2, 3, 5]), amd=rng.random() < 0.4,
                        available_times=rng.choice(WINDOWS) if rng.random() < 0.15 else None)
        case["later"] = rng.choice([0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 100.0, 700.0])
        yield f"{number:04d}/{channel}/{config}/{case['to']}", case


def _record(case: dict[str, Any]) -> str:
    ready = case["ready_at"]
    config = _CONFIGS[case["config"]]
    value = [planned(config, case), mnc_for(config, case["to"], case["message_id"]),
             *(stored(config, case, moment) for moment in (ready, ready + case["later"], ready + 1e6))]
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()[:12]


def test_thousands_of_random_plans_and_stored_steps_match_the_golden_record():
    assert_matches_golden({name: _record(case) for name, case in _cases()}, GOLDEN)


def test_the_random_cases_reach_every_outcome_and_corner():
    kinds: set[str] = set()
    expired_inline = retried = 0
    for _, case in _cases():
        plan = planned(_CONFIGS[case["config"]], case)
        kinds.update(step[1] for step in plan)
        expired_inline += bool(plan) and plan[0][1] == "expired"
        retried += any(step[1] == "retry" for step in plan)
    assert kinds >= {"sent", "notify", "delivered", "undelivered", "rejected", "expired", "answered", "machine",
                     "no_answer", "retry"}
    assert expired_inline > 20 and retried > 20
