"""Golden plans: the carrier's futures and what the worker stores for them never change.

``carrier_golden.json`` holds, per case, a short digest of the exact plan (due times to the microsecond,
kinds, statuses, deliveries, details) and of what ``worker.plan_message`` collects for it (events,
updates, notifications, ``work`` rows), recorded before planning was optimised. A failing case names the
inputs whose future moved. Regenerate only when a change of outcome is intended:

    SENDFRAME_REGEN_GOLDEN=1 .venv/bin/pytest tests/sandbox/test_carrier_golden.py
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sendframe.sandbox.carrier import CarrierConfig, mnc_for

from .golden import WINDOWS, assert_matches_golden, planned, stored

GOLDEN = Path(__file__).with_name("carrier_golden.json")
READY = datetime(2026, 11, 18, 9, 30, 12, 345678, tzinfo=UTC).timestamp()  # a Wednesday, with microseconds
NIGHT = datetime(2026, 11, 21, 23, 59, 59, 999999, tzinfo=UTC).timestamp()  # a Saturday, just before midnight
MAGIC = [447700900000 + last for last in (0, 1, 57, 99, 100, 142, 199, 200, 263, 299, 300, 333, 399, 400, 401,
                                          488, 499, 500, 555, 599, 600, 612, 699, 700, 777, 999)]
ORDINARY = ["447700899999", "447700901000", "34600000001", "34699123456", "351912345678", "447911123456",
            "12025550123", "5511987654321", "33612345678", "4915112345678", "5215512345678", "81312345678",
            "9715012345"]
EXPIRIES = [None, -30.0, 0.0, 0.15, 0.4, 1.1, 2.5, 90.0, 700.0, 1300.0, 3600.0]


def _id(*parts: object) -> str:
    return hashlib.blake2b(repr(parts).encode(), digest_size=10).hexdigest()


def _cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """Several hundred varied messages: every magic range, many countries, expiry, windows, calls, email."""
    for seed in (0, 7):
        for index, to in enumerate([str(n) for n in MAGIC] + ORDINARY):
            for variant in range(6):
                ready = (READY, NIGHT)[variant % 2] + variant * 0.123457
                expiry = EXPIRIES[(index + variant) % len(EXPIRIES)]
                expires = None if expiry is None else ready + expiry
                windows = WINDOWS[(index * 3 + variant) % len(WINDOWS)] if variant >= 2 else None
                yield (f"sms/{seed}/{to}/{variant}", dict(channel="sms" if variant % 3 else "landingsms", seed=seed,
                       message_id=_id(seed, to, variant), to=to, parts=1 + variant % 3, ready_at=ready,
                       expires_at=expires, available_times=windows))
                yield (f"call/{seed}/{to}/{variant}", dict(channel="voice" if variant % 2 else "voiceAudio", seed=seed,
                       message_id=_id("call", seed, to, variant), to=to, ready_at=ready, expires_at=expires,
                       retries=variant % 4, amd=variant in (1, 2, 5)))
                if variant < 3:
                    yield (f"whatsapp/{seed}/{to}/{variant}", dict(channel="whatsapp", seed=seed,
                           message_id=_id("wa", seed, to, variant), to=to, ready_at=ready))
        for number in range(12):
            to = f"user{number}@example.{('com', 'es', 'co.uk')[number % 3]}"
            yield (f"mailing/{seed}/{to}", dict(channel="mailing", seed=seed, message_id=_id("mail", seed, to), to=to,
                   ready_at=READY + number))
        for number in range(40):  # ordinary numbers with many ids: every profile outcome occurs
            to = ORDINARY[number % len(ORDINARY)]
            yield (f"spread/{seed}/{number}", dict(channel="sms", seed=seed, message_id=f"{number:020x}", to=to,
                   parts=1, ready_at=READY, expires_at=None, available_times=None))
    for retries in range(4):  # windows shift call retries (carrier only: requests do not pass windows to calls)
        for to in ("447700900450", "34600000001", "447700900050"):
            yield (f"call-windows/{retries}/{to}", dict(channel="voice", seed=3, message_id=_id("cw", retries, to),
                   to=to, ready_at=NIGHT, expires_at=None if retries % 2 else NIGHT + 7200, retries=retries, amd=False,
                   available_times=[{"from": "00:00", "to": "00:20"}, {"from": "00:40", "to": "01:00"}]))


_CONFIGS: dict[int, CarrierConfig] = {}


def _config(seed: int) -> CarrierConfig:
    return _CONFIGS.setdefault(seed, CarrierConfig.default(seed=seed))


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()[:12]


def _record(name: str, case: dict[str, Any]) -> str:
    """``"plan=<digest> mnc=<mnc> now=<digest> soon=<digest> later=<digest>"``: the plan, then what the
    worker stores when it plans the message at its ready time, half a second later and long after."""
    config = _config(case["seed"])
    entry = [f"plan={_digest(planned(config, case))}", f"mnc={mnc_for(config, case['to'], case['message_id'])}"]
    if not name.startswith("call-windows"):
        ready = case["ready_at"]
        for label, moment in (("now", ready), ("soon", ready + 0.5), ("later", ready + 1e6)):
            entry.append(f"{label}={_digest(stored(config, case, moment))}")
    return " ".join(entry)


def _recorded() -> dict[str, str]:
    return {name: _record(name, case) for name, case in _cases()}


def test_golden_file_covers_several_hundred_cases():
    golden = json.loads(GOLDEN.read_text())
    assert len(golden) >= 300
    assert {name.split("/")[0] for name in golden} >= {"sms", "call", "whatsapp", "mailing", "spread", "call-windows"}


def test_plans_and_stored_steps_match_the_golden_record():
    assert_matches_golden(_recorded(), GOLDEN)


def test_the_golden_cases_reach_every_outcome():
    seen = set()
    for _, case in _cases():
        seen.update(step[1] for step in planned(_config(case["seed"]), case))
    assert seen >= {"sent", "notify", "delivered", "undelivered", "rejected", "expired", "answered", "machine",
                    "no_answer", "retry"}


def test_golden_ready_times_carry_microseconds():
    # so a plan that rounded its due times differently from datetime arithmetic would change a digest
    ready = datetime.fromtimestamp(READY, UTC)
    assert ready.microsecond == 345678 and (ready + timedelta(seconds=0.1)).microsecond == 445678
