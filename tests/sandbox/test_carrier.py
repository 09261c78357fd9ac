"""The simulated carrier: deterministic plans, magic numbers, windows, expiry, call retries, profiles."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.api.models import AvailableTime
from sendframe.errors import ConfigurationError
from sendframe.sandbox.carrier import (
    MAGIC_OUTCOMES,
    CarrierConfig,
    Clock,
    Latency,
    Profile,
    magic_outcome,
    mnc_for,
    next_window_start,
    plan_call,
    plan_simple,
    plan_sms,
)

T0 = datetime(2026, 11, 18, 9, 30, tzinfo=UTC)  # a Wednesday
CONFIG = CarrierConfig.default(seed=0)


def sms(to="34600000001", message_id="0123456789abcdef0123", *, config=CONFIG, ready_at=T0, expires_at=None,
        available_times=None, parts=1):
    return plan_sms(config, message_id=message_id, to=to, parts=parts, ready_at=ready_at,
                    expires_at=expires_at, available_times=available_times)


def call(to="34600000001", message_id="0123456789abcdef0123", *, config=CONFIG, ready_at=T0, expires_at=None,
         retries=0, amd=False):
    return plan_call(config, message_id=message_id, to=to, ready_at=ready_at, expires_at=expires_at,
                     retries=retries, amd=amd)


def kinds(plan):
    return [(s.kind, s.status, s.delivery) if s.kind == "notify" else s.kind for s in plan]


def final(plan):
    return [s for s in plan if s.kind != "notify"][-1]


# ---------------------------------------------------------------------------------- determinism
def test_same_seed_and_id_give_the_same_plan():
    for i in range(50):
        mid = f"{i:020x}"
        assert sms(message_id=mid) == sms(message_id=mid)
        assert call(message_id=mid, retries=3) == call(message_id=mid, retries=3)


def test_a_different_seed_gives_different_plans():
    other = CarrierConfig.default(seed=1)
    ids = [f"{i:020x}" for i in range(20)]
    assert [sms(message_id=m) for m in ids] != [sms(message_id=m, config=other) for m in ids]


def test_plans_are_in_due_order_and_never_before_ready_at():
    for i in range(200):
        plan = sms(message_id=f"{i:020x}")
        dues = [s.due for s in plan]
        assert dues == sorted(dues) and dues[0] >= T0


def test_real_clock_latencies_are_short_enough_for_demos():
    for i in range(500):
        plan = sms(message_id=f"{i:020x}")
        accepted = next(s for s in plan if s.status == "ACCEPTD")
        assert 0.1 <= (accepted.due - T0).total_seconds() <= 0.5
        assert (plan[-1].due - T0).total_seconds() <= 3.5


# -------------------------------------------------------------------------------- magic numbers
def test_magic_block_covers_exactly_the_thousand_drama_numbers():
    covered = {n for first, last, _, _ in MAGIC_OUTCOMES for n in range(first, last + 1)}
    assert covered == set(range(1000))
    assert magic_outcome("447700899999") is None and magic_outcome("447700901000") is None
    assert magic_outcome("34600000001") is None and magic_outcome("4477009000001") is None


def test_magic_delivered_fast():
    plan = sms("447700900042")
    assert kinds(plan) == ["sent", ("notify", "ACCEPTD", 4), "delivered", ("notify", "DELIVRD", 1)]
    assert (plan[-1].due - T0).total_seconds() < 0.5


def test_magic_undelivered_reports_undeliv_2():
    assert kinds(sms("447700900150"))[-2:] == ["undelivered", ("notify", "UNDELIV", 2)]


def test_magic_rejected_reports_rejectd_16():
    assert kinds(sms("447700900299"))[-2:] == ["rejected", ("notify", "REJECTD", 16)]


def test_magic_never_expires_at_expiry_or_stays_accepted():
    expiry = T0 + timedelta(hours=2)
    plan = sms("447700900300", expires_at=expiry)
    assert kinds(plan)[-2:] == ["expired", ("notify", "EXPIRED", 2)] and plan[-1].due == expiry
    assert kinds(sms("447700900399")) == ["sent", ("notify", "ACCEPTD", 4)]


def test_magic_no_answer_calls_are_never_answered():
    plan = call("447700900400", retries=2)
    assert [s.kind for s in plan].count("no_answer") == 3 and final(plan).kind == "undelivered"


def test_magic_machine_ends_the_call_with_amd():
    plan = call("447700900500", amd=True, retries=3)
    assert [s.kind for s in plan] == ["sent", "machine", "undelivered"]


def test_magic_machine_counts_as_answered_without_amd():
    plan = call("447700900500", amd=False)
    assert [s.kind for s in plan] == ["sent", "answered", "delivered"]
    assert plan[1].detail["machine"] is True


def test_magic_delivered_slowly_takes_60_to_120_seconds():
    for suffix in ("600", "650", "699"):
        plan = sms("447700900" + suffix)
        assert final(plan).kind == "delivered"
        assert 60 <= (final(plan).due - T0).total_seconds() <= 120


def test_other_magic_numbers_are_delivered():
    assert final(sms("447700900777")).kind == "delivered"
    assert final(sms("447700900450")).kind == "delivered"  # call-only outcomes leave SMS delivered


def test_magic_outcomes_apply_to_calls_and_whatsapp():
    assert final(call("447700900001")).kind == "delivered"
    assert final(call("447700900101")).kind == "undelivered"
    assert final(call("447700900201")).kind == "rejected"
    assert final(call("447700900301", expires_at=T0 + timedelta(hours=1))).kind == "expired"
    whatsapp = plan_simple(CONFIG, message_id="w", channel="whatsapp", to="447700900150", ready_at=T0)
    assert final(whatsapp).kind == "undelivered"


def test_ordinary_numbers_are_never_forced():
    coin = CarrierConfig(seed=2, profiles={
        "44": Profile("coin", delivery_rate=0.5, undelivered_rate=0.5, rejected_rate=0)})
    neighbours = ("447700899999", "447700901000", "447700901150", "447700800150")
    for to in neighbours:
        outcomes = {final(sms(to, message_id=f"{i:020x}", config=coin)).kind for i in range(60)}
        assert outcomes == {"delivered", "undelivered"}, to
    forced = {final(sms("447700900000", message_id=f"{i:020x}", config=coin)).kind for i in range(60)}
    assert forced == {"delivered"}


# ------------------------------------------------------------------------------------- windows
def test_a_message_inside_a_window_is_sent_at_once():
    assert next_window_start(T0, [{"from": "09:00", "to": "18:00"}]) == T0


def test_a_message_outside_every_window_waits_for_the_next_start():
    late = T0.replace(hour=19)
    next_morning = (late + timedelta(days=1)).replace(hour=9, minute=0)
    assert next_window_start(late, [{"from": "09:00", "to": "18:00"}]) == next_morning
    plan = sms(ready_at=late, available_times=[{"from": "09:00", "to": "18:00"}])
    assert plan[0].kind == "sent" and plan[0].due == datetime(2026, 11, 19, 9, 0, tzinfo=UTC)


def test_a_window_with_to_before_from_wraps_midnight():
    night = [{"from": "22:00", "to": "06:00"}]
    assert next_window_start(T0.replace(hour=2), night) == T0.replace(hour=2)  # inside, after midnight
    assert next_window_start(T0.replace(hour=23), night) == T0.replace(hour=23)
    assert next_window_start(T0.replace(hour=12), night) == T0.replace(hour=22, minute=0)


def test_a_window_day_is_the_weekday_monday_1_to_sunday_7():
    saturday = [{"day": 6, "from": "10:00", "to": "12:00"}]
    assert next_window_start(T0, saturday) == datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
    sunday_night = [{"day": 7, "from": "23:00", "to": "01:00"}]
    monday_0030 = datetime(2026, 11, 23, 0, 30, tzinfo=UTC)
    assert next_window_start(monday_0030, sunday_night) == monday_0030  # the Sunday window wraps into Monday


def test_windows_accept_available_time_models():
    window = AvailableTime.model_validate({"day": 3, "from": "10:00", "to": "11:00"})
    assert next_window_start(T0, [window]) == T0.replace(hour=10, minute=0)


# -------------------------------------------------------------------------------------- expiry
def test_a_final_report_after_expiry_becomes_expired_at_expiry():
    expiry = T0 + timedelta(seconds=30)
    plan = sms("447700900600", expires_at=expiry)
    assert kinds(plan)[-2:] == ["expired", ("notify", "EXPIRED", 2)] and plan[-1].due == expiry


def test_a_message_whose_window_opens_after_expiry_expires_without_being_sent():
    plan = sms(ready_at=T0.replace(hour=19), expires_at=T0.replace(hour=21),
               available_times=[{"from": "09:00", "to": "18:00"}])
    assert kinds(plan) == ["expired", ("notify", "EXPIRED", 2)]
    assert plan[0].due == T0.replace(hour=21)


def test_a_message_ready_after_its_expiry_expires_without_being_sent():
    plan = sms(ready_at=T0, expires_at=T0 - timedelta(minutes=1))
    assert "sent" not in kinds(plan) and final(plan).kind == "expired"


# --------------------------------------------------------------------------------------- calls
def test_call_retries_are_more_than_ten_minutes_apart_and_at_most_retries():
    for i in range(300):
        plan = call(message_id=f"{i:020x}", retries=5)
        attempts = [s.due for s in plan if s.kind in ("sent", "retry")]
        assert 1 <= len(attempts) <= 6
        assert all((b - a) > timedelta(minutes=10) for a, b in pairwise(attempts))
        assert all((b - a) <= timedelta(minutes=12, seconds=10) for a, b in pairwise(attempts))


def test_calls_without_retries_have_one_attempt():
    for i in range(100):
        assert sum(s.kind in ("sent", "retry") for s in call(message_id=f"{i:020x}")) == 1


def test_call_retries_never_happen_after_expiry():
    expiry = T0 + timedelta(minutes=25)
    plan = call("447700900400", retries=5, expires_at=expiry)
    attempts = [s.due for s in plan if s.kind in ("sent", "retry")]
    assert len(attempts) == 3 and all(a <= expiry for a in attempts)
    assert final(plan).kind == "expired" and final(plan).due == expiry


def test_call_outcomes_follow_the_profile():
    profile = Profile("test", answer_rate=0.5, machine_rate=0.25)
    config = CarrierConfig(seed=4, profiles={"34": profile})
    firsts = [call(message_id=f"{i:020x}", config=config)[1].kind for i in range(4000)]
    assert 0.72 < firsts.count("answered") / 4000 < 0.78  # a machine counts as answered without amd
    assert 0.22 < firsts.count("no_answer") / 4000 < 0.28
    with_amd = [call(message_id=f"{i:020x}", config=config, amd=True)[1].kind for i in range(4000)]
    assert 0.22 < with_amd.count("machine") / 4000 < 0.28


# ------------------------------------------------------------------------------ profiles, mnc
def test_delivery_rate_of_a_profile_holds_over_ten_thousand_ids():
    profile = Profile("test", delivery_rate=0.8, undelivered_rate=0.15, rejected_rate=0.05)
    config = CarrierConfig(seed=9, profiles={"34": profile})
    finals = [final(sms(message_id=f"{i:020x}", config=config)).kind for i in range(10_000)]
    assert abs(finals.count("delivered") / 10_000 - 0.8) < 0.015
    assert abs(finals.count("undelivered") / 10_000 - 0.15) < 0.015
    assert abs(finals.count("rejected") / 10_000 - 0.05) < 0.01


def test_the_longest_calling_code_prefix_picks_the_profile():
    assert CONFIG.profile_for("351912345678").name == "PT"
    assert CONFIG.profile_for("34600000001").name == "ES"
    assert CONFIG.profile_for("12025550123").name == "US"
    assert CONFIG.profile_for("81312345678").name == "default"


def test_mnc_is_a_realistic_string_stable_for_a_number():
    assert mnc_for(CONFIG, "34600000001", "a") == mnc_for(CONFIG, "34600000001", "b")
    assert {mnc_for(CONFIG, f"3460000{i:04d}", "m") for i in range(200)} == {"01", "03", "04", "07"}
    assert mnc_for(CONFIG, "12025550123", "m") in ("260", "410")
    assert mnc_for(CONFIG, "81312345678", "m") == ""


def test_profiles_with_impossible_rates_are_refused():
    with pytest.raises(ConfigurationError, match="exceed 1"):
        Profile("bad", delivery_rate=0.9, undelivered_rate=0.2, rejected_rate=0.0)
    with pytest.raises(ConfigurationError, match="mnc"):
        Profile("bad", mncs=(1,))  # type: ignore[arg-type]


def test_config_loads_from_a_json_file(tmp_path):
    path = tmp_path / "carrier.json"
    path.write_text(json.dumps({"seed": 7, "profiles": {"34": {
        "name": "ES-slow", "delivery_rate": 0.5, "undelivered_rate": 0.5, "rejected_rate": 0,
        "final_latency": {"median": 2.0, "sigma": 0.1, "low": 1.0, "high": 4.0}, "mncs": ["01"]}}}))
    config = CarrierConfig.from_json(path)
    assert config.seed == 7 and config.profile_for("34600000001").name == "ES-slow"
    assert config.profile_for("351912345678").name == "PT"  # built-ins kept
    assert config.profile_for("34600000001").final_latency == Latency(2.0, 0.1, 1.0, 4.0)
    assert CarrierConfig.from_json(path, seed=3).seed == 3


def test_a_bad_config_file_names_the_field(tmp_path):
    path = tmp_path / "carrier.json"
    path.write_text(json.dumps({"profiles": {"34": {"delivery_rate": "high"}}}))
    with pytest.raises(ConfigurationError, match=r"profiles\.34\.delivery_rate"):
        CarrierConfig.from_json(path)
    path.write_text("{not json")
    with pytest.raises(ConfigurationError, match="Cannot read the carrier config"):
        CarrierConfig.from_json(path)


# --------------------------------------------------------------------------------------- clock
def test_a_manual_clock_moves_only_when_advanced():
    clock = Clock("manual", start=T0)
    assert clock.now() == T0
    clock.advance(61.5)
    assert clock.now() == T0 + timedelta(seconds=61.5)
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_a_manual_clock_without_start_begins_at_the_real_now():
    before = datetime.now(UTC)
    assert before <= Clock("manual").now() <= datetime.now(UTC)


def test_a_real_clock_is_utc_and_cannot_be_advanced():
    clock = Clock("real")
    assert clock.now().tzinfo is not None and clock.now().utcoffset() == timedelta(0)
    with pytest.raises(ValueError, match="manual"):
        clock.advance(1)


def test_the_same_plan_runs_under_a_manual_clock():
    clock = Clock("manual", start=T0)
    plan = sms("447700900000", ready_at=clock.now())
    due = [s for s in plan if s.due <= clock.advance(0.5)]
    assert [s.kind for s in due] == [s.kind for s in plan]


def test_a_bad_latency_in_a_config_file_names_the_field(tmp_path):
    path = tmp_path / "carrier.json"
    path.write_text(json.dumps({"profiles": {"351": {"final_latency": {"median": -1}}}}))
    with pytest.raises(ConfigurationError, match=r"profiles\.351\.final_latency"):
        CarrierConfig.from_json(path)


# ---------------------------------------------------------------------------------- properties
@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), message_id=st.text("0123456789abcdef", min_size=20, max_size=20),
       suffix=st.integers(0, 999), magic=st.booleans(), start=st.integers(0, 7 * 86400),
       expiry=st.one_of(st.none(), st.integers(-60, 3 * 3600)), windowed=st.booleans())
def test_sms_plans_are_ordered_never_pass_expiry_and_end_in_one_final(seed, message_id, suffix, magic, start,
                                                                      expiry, windowed):
    to = f"447700900{suffix:03d}" if magic else f"3461{suffix:07d}"
    ready = T0 + timedelta(seconds=start)
    expires = None if expiry is None else ready + timedelta(seconds=expiry)
    windows = [{"day": 2, "from": "22:00", "to": "02:00"}, {"from": "12:00", "to": "12:30"}] if windowed else None
    plan = sms(to, message_id, config=CarrierConfig.default(seed), ready_at=ready, expires_at=expires,
               available_times=windows)
    assert plan == sms(to, message_id, config=CarrierConfig.default(seed), ready_at=ready, expires_at=expires,
                       available_times=windows)
    dues = [s.due for s in plan]
    assert dues == sorted(dues)
    if expires is not None:
        assert all(d <= max(expires, ready) for d in dues)
    finals = [s for s in plan if s.kind in ("delivered", "undelivered", "rejected", "expired")]
    assert len(finals) <= 1
    if finals:
        assert plan[-1].kind == "notify" and plan[-1].status == finals[0].status
    if plan and plan[0].kind == "sent":
        assert next_window_start(plan[0].due, windows) == plan[0].due >= ready


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), message_id=st.text("0123456789abcdef", min_size=20, max_size=20),
       retries=st.integers(0, 5), amd=st.booleans(), expiry=st.one_of(st.none(), st.integers(0, 4 * 3600)))
def test_call_plans_respect_retries_spacing_and_expiry(seed, message_id, retries, amd, expiry):
    expires = None if expiry is None else T0 + timedelta(seconds=expiry)
    plan = call(message_id=message_id, config=CarrierConfig.default(seed), retries=retries, amd=amd, expires_at=expires)
    attempts = [s.due for s in plan if s.kind in ("sent", "retry")]
    assert len(attempts) <= retries + 1
    assert all(b - a > timedelta(minutes=10) for a, b in pairwise(attempts))
    if expires is not None:
        assert all(s.due <= expires for s in plan)
    assert [s.kind for s in plan].count("answered") <= 1
    if not amd:
        assert "machine" not in [s.kind for s in plan]
