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
import os
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sendframe.api.models import AvailableTime
from sendframe.pricing import load_prices
from sendframe.sandbox import worker
from sendframe.sandbox.carrier import CarrierConfig, Latency, Profile, mnc_for, plan_call, plan_simple, plan_sms

GOLDEN = Path(__file__).with_name("carrier_wide_golden.json")
CASES = 4000
URL = "http://127.0.0.1:9/r?i=%i&s=%s&d=%d&t=%t&y=%y&m=%m&c=%c&p=%p&P=%P&C=%C&S=%S&n=%n"
PREFIXES = ["34", "351", "44", "1", "55", "33", "49", "52", "81", "971", "4477009", "3460"]
CHANNELS = ["sms", "sms", "sms", "landingsms", "voice", "voice", "voiceAudio", "whatsapp", "mailing", "email"]
EXPIRIES = [None, None, -5.0, 0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 1.3, 2.0, 4.0, 60.0, 90.0, 130.0, 599.0, 601.0,
            1250.0, 2500.0, 86400.0]
WINDOWS: list[Any] = [
    None,
    [{"from": "09:00", "to": "18:00"}],
    [{"from": "22:00", "to": "06:00", "day": 6}],
    [{"from": "00:00", "to": "00:00", "day": 7}],
    [{"from": "10:00", "to": "10:05"}, {"from": "13:30", "to": "14:00", "day": 3}],
    [AvailableTime.model_validate({"from": "09:31", "to": "09:40"})],
    [{"from": "00:00", "to": "00:20"}, {"from": "00:40", "to": "01:00"}],
]
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


def _at(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def _plan(case: dict[str, Any]) -> list[Any]:
    config, channel = _CONFIGS[case["config"]], case["channel"]
    common = dict(message_id=case["message_id"], to=case["to"], ready_at=_at(case["ready_at"]))
    if channel in ("sms", "landingsms"):
        steps = plan_sms(config, parts=case["parts"], expires_at=_at(case["expires_at"]),
                         available_times=case["available_times"], **common)
    elif channel in ("voice", "voiceAudio"):
        steps = plan_call(config, expires_at=_at(case["expires_at"]), retries=case["retries"], amd=case["amd"],
                          available_times=case["available_times"], **common)
    else:
        steps = plan_simple(config, channel=channel, **common)
    return [[s.due.isoformat(), s.kind, s.status, s.delivery, sorted(s.detail.items())] for s in steps]


_PRICES = load_prices()


def _stored(case: dict[str, Any], moment: float) -> list[Any]:
    """What the worker collects when it plans the message at ``moment`` (as a request's ``plans`` row would)."""
    state = SimpleNamespace(carrier=_CONFIGS[case["config"]], prices=_PRICES)
    message = {"id": case["message_id"], "channel": case["channel"], "sender": "Shop", "recipient": case["to"],
               "parts": case.get("parts", 1),
               "notification_url": URL if case["channel"] in ("sms", "landingsms") else None,
               "cost": 0.05, "mnc": None, "campaign_id": 12, "sending_id": 34, "scheduled_at": None,
               "created_at": "2026-11-18T09:30:12+00:00", "row_number": 1, "sent_at": None}
    arguments = {k: v for k, v in case.items() if k not in ("config", "message_id", "to", "parts", "later")}
    if case["channel"] in ("voice", "voiceAudio"):
        arguments.pop("available_times", None)  # sending never queues windows for calls
    out = worker.Round()
    worker.plan_message(state, message, {**arguments, "to": case["to"], "parts": case.get("parts")}, moment, out)
    return [out.events, out.updates, out.notes, out.planned, sorted(out.done.items()), message["mnc"],
            None if message["sent_at"] is None else message["sent_at"].isoformat()]


def _record(case: dict[str, Any]) -> str:
    ready = case["ready_at"]
    value = [_plan(case), mnc_for(_CONFIGS[case["config"]], case["to"], case["message_id"]),
             *(_stored(case, moment) for moment in (ready, ready + case["later"], ready + 1e6))]
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()[:12]


def test_thousands_of_random_plans_and_stored_steps_match_the_golden_record():
    recorded = {name: _record(case) for name, case in _cases()}
    if os.environ.get("SENDFRAME_REGEN_GOLDEN") == "1":
        entries = (f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(recorded.items()))
        GOLDEN.write_text("{\n" + ",\n".join(entries) + "\n}\n")
        pytest.skip("golden file regenerated")
    golden = json.loads(GOLDEN.read_text())
    assert recorded.keys() == golden.keys()
    changed = [name for name in golden if recorded[name] != golden[name]]
    assert not changed, f"{len(changed)} of {len(golden)} plans changed, e.g. {changed[:5]}"


def test_the_random_cases_reach_every_outcome_and_corner():
    kinds: set[str] = set()
    expired_inline = retried = 0
    for _, case in _cases():
        plan = _plan(case)
        kinds.update(step[1] for step in plan)
        expired_inline += bool(plan) and plan[0][1] == "expired"
        retried += any(step[1] == "retry" for step in plan)
    assert kinds >= {"sent", "notify", "delivered", "undelivered", "rejected", "expired", "answered", "machine",
                     "no_answer", "retry"}
    assert expired_inline > 20 and retried > 20
