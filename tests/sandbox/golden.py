"""Golden records: digests of what the carrier plans and the worker stores, recorded once and compared after.

``SENDFRAME_REGEN_GOLDEN=1 pytest tests/sandbox -k golden`` writes them again (then the test skips)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sendframe.api.models import AvailableTime
from sendframe.pricing import load_prices
from sendframe.sandbox import worker
from sendframe.sandbox.carrier import CarrierConfig, plan_call, plan_simple, plan_sms

URL = "http://127.0.0.1:9/r?i=%i&s=%s&d=%d&t=%t&y=%y&m=%m&c=%c&p=%p&P=%P&C=%C&S=%S&n=%n"
WINDOWS: list[Any] = [
    None,
    [{"from": "09:00", "to": "18:00"}],
    [{"from": "22:00", "to": "06:00", "day": 6}],
    [{"from": "00:00", "to": "00:00", "day": 7}],
    [{"from": "10:00", "to": "10:05"}, {"from": "13:30", "to": "14:00", "day": 3}],
    [AvailableTime.model_validate({"from": "09:31", "to": "09:40"})],
]
_PRICES = load_prices()
_NOT_ARGUMENTS = frozenset({"seed", "config", "later", "message_id", "to", "parts"})  # what a case says of itself


def _at(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def planned(config: CarrierConfig, case: dict[str, Any]) -> list[Any]:
    """The carrier's plan of one case, as plain values."""
    channel = case["channel"]
    common = dict(message_id=case["message_id"], to=case["to"], ready_at=_at(case["ready_at"]))
    if channel in ("sms", "landingsms"):
        steps = plan_sms(config, parts=case["parts"], expires_at=_at(case["expires_at"]),
                         available_times=case["available_times"], **common)
    elif channel in ("voice", "voiceAudio"):
        steps = plan_call(config, expires_at=_at(case["expires_at"]), retries=case["retries"], amd=case["amd"],
                          available_times=case.get("available_times"), **common)
    else:
        steps = plan_simple(config, channel=channel, **common)
    return [[s.due.isoformat(), s.kind, s.status, s.delivery, sorted(s.detail.items())] for s in steps]


def stored(config: CarrierConfig, case: dict[str, Any], moment: float) -> list[Any]:
    """What the worker collects when it plans the message at ``moment`` (as a request's ``plans`` row would)."""
    state = SimpleNamespace(carrier=config, prices=_PRICES)
    message = {"id": case["message_id"], "channel": case["channel"], "sender": "Shop", "recipient": case["to"],
               "parts": case.get("parts", 1),
               "notification_url": URL if case["channel"] in ("sms", "landingsms") else None,
               "cost": 0.05, "mnc": None, "campaign_id": 12, "sending_id": 34, "scheduled_at": None,
               "created_at": "2026-11-18T09:30:12+00:00", "row_number": 1, "sent_at": None}
    arguments = {k: v for k, v in case.items() if k not in _NOT_ARGUMENTS}
    if case["channel"] in ("voice", "voiceAudio"):
        arguments.pop("available_times", None)  # sending never queues windows for calls
    out = worker.Round()
    worker.plan_message(state, message, {**arguments, "to": case["to"], "parts": case.get("parts")}, moment, out)
    return [out.events, out.updates, out.notes, out.planned, sorted(out.done.items()), message["mnc"],
            None if message["sent_at"] is None else message["sent_at"].isoformat()]


def assert_matches_golden(recorded: dict[str, str], golden_file: Path) -> None:
    """``recorded`` (case name -> digest) equals the record in ``golden_file``, or names the cases that changed."""
    if os.environ.get("SENDFRAME_REGEN_GOLDEN") == "1":
        entries = (f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(recorded.items()))
        golden_file.write_text("{\n" + ",\n".join(entries) + "\n}\n")
        pytest.skip("golden file regenerated")
    golden = json.loads(golden_file.read_text())
    assert recorded.keys() == golden.keys()
    changed = [name for name in golden if recorded[name] != golden[name]]
    assert not changed, f"{len(changed)} of {len(golden)} plans changed, e.g. {changed[:5]}"
