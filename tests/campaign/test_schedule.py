"""local_send_times: zones from the number or a column, DST-aware send times."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
import phonenumbers
import pytest
from phonenumbers import timezone as phone_zones

from sendframe.api.client import Client
from sendframe.api.recipients import normalise_phone
from sendframe.api.validation import format_wire_datetime
from sendframe.campaign.schedule import (
    PREFERRED_ZONES,
    local_send_times,
    zone_of_number,
)
from sendframe.errors import InputError, UnknownOptionError
from sendframe.sandbox import Sandbox

MADRID_FIXED = "34912345678"  # Madrid landline: phonenumbers names Europe/Madrid alone
MADRID_MOBILE = "34600123456"  # a Spanish mobile: Madrid or the Canaries -> the country default, Madrid


def utc(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def one(phone: str, local_time: str | None = "10:00", **kw) -> pd.Series:
    return local_send_times(pd.DataFrame({"phone": [phone]}), local_time, **kw).iloc[0]


def test_madrid_10_00_is_09_00_utc_before_the_march_change_and_08_00_utc_on_its_sunday():
    # 2026-03-29 is the last Sunday of March: 02:00 CET -> 03:00 CEST (+01:00 -> +02:00)
    saturday = one(MADRID_FIXED, now=utc("2026-03-27 12:00"))  # Friday noon: next 10:00 is Saturday's
    assert saturday["send_at_utc"] == utc("2026-03-28 09:00")
    assert saturday["local_send_at"] == "2026-03-28 10:00:00+01:00"
    sunday = one(MADRID_FIXED, now=utc("2026-03-28 12:00"))  # Saturday noon: next 10:00 is Sunday's, in summer time
    assert sunday["send_at_utc"] == utc("2026-03-29 08:00")
    assert sunday["local_send_at"] == "2026-03-29 10:00:00+02:00"
    assert (sunday["timezone"], sunday["timezone_source"]) == ("Europe/Madrid", "number")


def test_madrid_10_00_on_the_last_sunday_of_october_is_back_to_09_00_utc():
    # 2026-10-25: 03:00 CEST -> 02:00 CET
    row = one(MADRID_FIXED, now=utc("2026-10-24 12:00"))
    assert row["send_at_utc"] == utc("2026-10-25 09:00")
    assert row["local_send_at"] == "2026-10-25 10:00:00+01:00"


def test_a_wall_time_skipped_by_dst_moves_forward_and_a_repeated_one_is_its_first_occurrence():
    spring = one(MADRID_FIXED, "02:30", date="2026-03-29", now=utc("2026-03-28 00:00"))
    assert spring["local_send_at"] == "2026-03-29 03:30:00+02:00"  # 02:30 does not exist that night
    assert spring["send_at_utc"] == utc("2026-03-29 01:30")
    autumn = one(MADRID_FIXED, "02:30", date="2026-10-25", now=utc("2026-10-24 00:00"))
    assert autumn["local_send_at"] == "2026-10-25 02:30:00+02:00"  # 02:30 happens twice: the first, in summer time
    assert autumn["send_at_utc"] == utc("2026-10-25 00:30")


def test_us_numbers_take_the_area_codes_zone_and_the_country_default_where_phonenumbers_cannot_tell():
    contacts = pd.DataFrame({"phone": ["+1 212 555 0123", "+1 415 555 0123", "+1 800 555 0123", "+1 907 555 0123"]})
    plan = local_send_times(contacts, "10:00", now=utc("2026-07-01 00:00"))
    assert plan["timezone"].tolist() == ["America/New_York", "America/Los_Angeles", "America/New_York",
                                         "America/Anchorage"]
    # 800 is toll-free: every NANP zone; 907 (Alaska): Adak or Anchorage; the preference list picks
    assert plan["timezone_source"].tolist() == ["number", "number", "country default", "country default"]
    assert plan["send_at_utc"].tolist() == [utc("2026-07-01 14:00"), utc("2026-07-01 17:00"), utc("2026-07-01 14:00"),
                                            utc("2026-07-01 18:00")]


def test_zone_rules_for_spain_germany_the_sandbox_block_and_unknown_codes():
    assert zone_of_number(MADRID_MOBILE) == ("Europe/Madrid", "country default")
    assert zone_of_number("34928123456") == ("Atlantic/Canary", "number")  # Las Palmas landline
    assert zone_of_number("4915123456789") == ("Europe/Berlin", "country")
    assert zone_of_number("447700900123") == ("Europe/London", "country default")  # not allocated: by its country
    assert zone_of_number("999123") is None


def test_zones_agree_with_phonenumbers_time_zones_for_number_on_random_numbers_of_many_countries():
    """The per-block shortcut gives what phonenumbers.timezone.time_zones_for_number gives, number by number."""
    rng = np.random.default_rng(13)
    lengths = {"34": 9, "1": 10, "44": 10, "61": 9, "55": 11, "52": 10, "7": 10, "49": 11, "351": 9, "62": 10,
               "64": 9, "39": 10, "33": 9, "54": 10, "86": 11, "91": 10}
    numbers, expected = [], []
    for code, size in lengths.items():
        for digits in rng.integers(0, 10, (400, size)):
            number = code + "".join(map(str, digits))
            parsed = phonenumbers.parse("+" + number)
            if phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164) != "+" + number:
                continue  # phonenumbers reads these digits as another number: placed by country (documented)
            zones = tuple(phone_zones.time_zones_for_number(parsed))
            candidates = phone_zones.TIMEZONE_DATA[code] if zones == ("Etc/Unknown",) else zones
            wanted = candidates[0] if len(candidates) == 1 else next(
                z for z in (*PREFERRED_ZONES.get(code, ()), *candidates) if z in candidates)
            assert zone_of_number(number)[0] == wanted, number
            numbers.append(number)
            expected.append(wanted)
    assert len(numbers) > 5000
    # the same through a whole table, where the number type is looked up once per numbering block
    plan = local_send_times(pd.DataFrame({"phone": numbers}), now=utc("2026-03-02 00:00"))
    kept = pd.Series(numbers).map(normalise_phone) == pd.Series(numbers)
    assert kept.mean() > 0.9
    assert (plan["timezone"][kept.to_numpy()] == pd.Series(expected, dtype="string")[kept]).all()


def test_the_timezone_column_wins_and_a_missing_value_falls_back_to_the_number():
    contacts = pd.DataFrame({"phone": [MADRID_FIXED, MADRID_FIXED], "TimeZone": ["America/Bogota", None]})
    plan = local_send_times(contacts, "10:00", now=utc("2026-03-02 00:00"))
    assert plan["timezone"].tolist() == ["America/Bogota", "Europe/Madrid"]
    assert plan["timezone_source"].tolist() == ["column", "number"]
    assert plan["send_at_utc"].tolist() == [utc("2026-03-02 15:00"), utc("2026-03-02 09:00")]


def test_a_bad_zone_in_the_column_names_row_column_and_value():
    contacts = pd.DataFrame({"phone": [MADRID_FIXED] * 2, "timezone": ["Europe/Madrid", "Mars/Olympus"]},
                            index=["ana", "bo"])
    with pytest.raises(InputError, match=r"Row 'bo', column 'timezone': 'Mars/Olympus' is not a known time zone"):
        local_send_times(contacts, now=utc("2026-03-02 00:00"))


@pytest.mark.parametrize("given", [
    {"now": datetime(2026, 3, 28, 12, 0)},
    {"now": "2026-03-28 12:00"},
    {"now": pd.Timestamp("2026-03-28 12:00")},
])
def test_a_naive_date_time_is_refused_with_a_message_saying_to_give_a_zone(given):
    with pytest.raises(InputError, match="give a zone"):
        local_send_times(pd.DataFrame({"phone": [MADRID_FIXED]}), "10:00", **given)


def test_a_date_time_where_a_time_of_day_or_a_day_is_expected_is_refused():
    aware = datetime(2026, 3, 28, 10, 0, tzinfo=UTC)
    with pytest.raises(InputError, match="time of day"):
        local_send_times(pd.DataFrame({"phone": [MADRID_FIXED]}), aware, now=aware)
    with pytest.raises(InputError, match="calendar day"):
        local_send_times(pd.DataFrame({"phone": [MADRID_FIXED]}), "10:00", date=aware, now=aware)


def test_quiet_hours_move_a_night_send_to_the_next_morning_across_the_dst_change():
    contacts = pd.DataFrame({"phone": [MADRID_FIXED, "12125550123"]})
    # 23:30 UTC on Saturday 28 March: 00:30 Sunday in Madrid (still CET), 19:30 Saturday in New York
    plan = local_send_times(contacts, None, quiet_hours=("09:00", "21:00"), now=utc("2026-03-28 23:30"))
    assert plan["local_send_at"].tolist() == ["2026-03-29 09:00:00+02:00", "2026-03-28 19:30:00-04:00"]
    assert plan["send_at_utc"].tolist() == [utc("2026-03-29 07:00"), utc("2026-03-28 23:30")]
    late = one(MADRID_FIXED, "22:00", quiet_hours=("09:00", "21:00"), now=utc("2026-03-02 00:00"))
    assert late["local_send_at"] == "2026-03-03 09:00:00+01:00"  # 22:00 is quiet: the next 09:00


def test_a_date_already_past_in_a_zone_is_an_error_naming_the_zone():
    with pytest.raises(InputError, match="already passed in 1 time zone.*Europe/Madrid"):
        one(MADRID_FIXED, "10:00", date="2026-03-02", now=utc("2026-03-02 12:00"))


def test_rows_without_a_zone_get_none_unless_a_default_is_given():
    emails = pd.DataFrame({"email": ["ana@example.com"]})
    assert local_send_times(emails, now=utc("2026-03-02 00:00"))["timezone_source"].tolist() == ["unknown"]
    assert pd.isna(local_send_times(emails, now=utc("2026-03-02 00:00"))["send_at_utc"].iloc[0])
    plan = local_send_times(emails, default_timezone="Europe/Lisbon", now=utc("2026-03-02 00:00"))
    assert (plan["timezone"].iloc[0], plan["timezone_source"].iloc[0]) == ("Europe/Lisbon", "default")


def test_the_input_is_untouched_and_the_result_is_on_its_index():
    contacts = pd.DataFrame({"phone": [MADRID_FIXED]}, index=["ana"])
    original = contacts.copy()
    plan = local_send_times(contacts, now=utc("2026-03-02 00:00"))
    pd.testing.assert_frame_equal(contacts, original)
    assert plan.index.tolist() == ["ana"]
    assert plan.columns.tolist() == ["timezone", "local_send_at", "send_at_utc", "timezone_source"]
    assert str(plan["send_at_utc"].dtype) == "datetime64[us, UTC]"


def test_an_unknown_keyword_is_refused_with_the_closest_one():
    with pytest.raises(UnknownOptionError, match="Did you mean 'quiet_hours'"):
        local_send_times(pd.DataFrame({"phone": [MADRID_FIXED]}), quiet_hour=("09:00", "21:00"))


def test_each_group_goes_out_at_its_time_when_sent_with_its_schedule_date():
    """Real HTTP: one request per group with the spec's scheduleDate; the sandbox's manual clock releases each."""
    with Sandbox(clock="manual") as sb, Client(sb.base_url, sb.username, sb.api_password) as client:
        now = pd.Timestamp(datetime.now(UTC))
        contacts = pd.DataFrame({"phone": ["447700900001", "447700900002"],
                                 "timezone": ["Asia/Tokyo", "America/Los_Angeles"]})
        plan = local_send_times(contacts, "10:00", now=now)
        groups = sorted(plan.groupby("send_at_utc").indices.items())  # one request per send time, in time order
        assert len(groups) == 2
        for at, rows in groups:
            client.send_sms({"message": "Hi", "from": "Shop", "to": contacts["phone"].iloc[rows].tolist(),
                             "scheduleDate": format_wire_datetime(at.to_pydatetime())})
        messages = sb.messages().set_index("recipient")
        for at, rows in groups:
            number = contacts["phone"].iloc[rows[0]]
            assert messages.loc[number, "scheduled_at"] == at.floor("s")
            assert messages.loc[number, "status"] == "SCHEDULED"
        first, second = groups[0][0], groups[1][0]
        sb.advance((first - now).total_seconds() + 60)
        status = sb.messages().set_index("recipient")["status"]
        first_number = contacts["phone"].iloc[groups[0][1][0]]
        second_number = contacts["phone"].iloc[groups[1][1][0]]
        assert status[first_number] != "SCHEDULED" and status[second_number] == "SCHEDULED"
        sb.advance((second - first).total_seconds())
        assert sb.messages().set_index("recipient")["status"][second_number] != "SCHEDULED"

