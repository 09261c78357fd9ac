"""What may be retried: lookups on transient failures, sends only when they never left."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from sendframe.api.retry import RetryPolicy, decide_exception, decide_response, parse_retry_after

POLICY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05, jitter=False)
REQUEST = httpx.Request("POST", "http://127.0.0.1/api/rest/sms")


@pytest.mark.parametrize("exc", [httpx.ConnectError("refused", request=REQUEST),
                                 httpx.ConnectTimeout("t", request=REQUEST),
                                 httpx.PoolTimeout("pool", request=REQUEST)])
def test_a_send_that_never_left_is_retried(exc):
    assert decide_exception("POST", exc, attempt=1, policy=POLICY).action == "retry"


@pytest.mark.parametrize("exc", [httpx.ReadTimeout("t", request=REQUEST),
                                 httpx.RemoteProtocolError("closed", request=REQUEST),
                                 httpx.ReadError("reset", request=REQUEST),
                                 httpx.WriteError("broken pipe", request=REQUEST)])
def test_a_send_that_may_have_arrived_is_an_unknown_outcome_never_retried(exc):
    decision = decide_exception("POST", exc, attempt=1, policy=POLICY)
    assert decision.action == "unknown"
    assert type(exc).__name__ in decision.reason


@pytest.mark.parametrize("exc", [httpx.ReadTimeout("t", request=REQUEST),
                                 httpx.RemoteProtocolError("closed", request=REQUEST),
                                 httpx.ConnectError("refused", request=REQUEST)])
def test_a_lookup_is_retried_on_any_transport_failure(exc):
    assert decide_exception("GET", exc, attempt=1, policy=POLICY).action == "retry"


def test_retries_stop_after_max_attempts():
    exc = httpx.ConnectError("refused", request=REQUEST)
    assert decide_exception("GET", exc, attempt=3, policy=POLICY).action == "fail"
    assert decide_response("GET", 503, attempt=3, policy=POLICY).action == "done"


def test_a_5xx_answer_to_a_send_is_unknown_but_a_lookup_retries():
    assert decide_response("POST", 500, attempt=1, policy=POLICY).action == "unknown"
    assert decide_response("POST", 503, attempt=1, policy=POLICY).action == "unknown"
    assert decide_response("GET", 500, attempt=1, policy=POLICY).action == "retry"


def test_429_is_retried_for_sends_and_lookups_honouring_retry_after():
    decision = decide_response("POST", 429, attempt=1, policy=POLICY, retry_after="0.2")
    assert decision.action == "retry"
    assert decision.delay == pytest.approx(0.2)


def test_client_errors_are_final_answers():
    for status in (400, 401, 403, 404, 413):
        assert decide_response("POST", status, attempt=1, policy=POLICY).action == "done"


def test_backoff_doubles_up_to_the_cap():
    assert [POLICY.delay(n) for n in (1, 2, 3, 4)] == [0.01, 0.02, 0.04, 0.05]


def test_jitter_stays_between_half_and_the_full_backoff():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    for _ in range(200):
        assert 2.0 <= policy.delay(3) <= 4.0


def test_retry_after_is_capped_by_max_retry_after():
    policy = RetryPolicy(base_delay=0.0, jitter=False, max_retry_after=5.0)
    assert policy.delay(1, "3600") == 5.0
    assert policy.delay(1, "-1") == 0.0


def test_a_policy_needs_at_least_one_attempt():
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


NOW = datetime(2026, 10, 21, 7, 28, tzinfo=UTC)


@pytest.mark.parametrize(("value", "seconds"), [
    ("120", 120.0),
    (" 7 ", 7.0),
    ("0.25", 0.25),
    ("Wed, 21 Oct 2026 07:28:30 GMT", 30.0),  # the IMF-fixdate form of RFC 9110
    ("Wednesday, 21-Oct-26 07:29:00 GMT", 60.0),  # the obsolete RFC 850 form
    ("Wed Oct 21 07:28:05 2026", 5.0),  # the obsolete asctime form (GMT)
])
def test_retry_after_is_read_as_delay_seconds_or_an_http_date(value, seconds):
    assert parse_retry_after(value, now=NOW) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["-5", "Wed, 21 Oct 2026 07:00:00 GMT"])
def test_a_negative_delay_or_a_past_date_means_no_wait(value):
    assert parse_retry_after(value, now=NOW) == 0.0


@pytest.mark.parametrize("value", ["soon", "", "nan", "Wed, 32 Oct 2026 07:00:00 GMT", None])
def test_an_unreadable_retry_after_is_ignored(value):
    assert parse_retry_after(value, now=NOW) is None


def test_a_retry_after_date_sets_the_delay_of_a_429_and_is_capped():
    in_a_minute = format_datetime(datetime.now(UTC) + timedelta(seconds=60), usegmt=True)
    decision = decide_response("POST", 429, attempt=1, policy=POLICY, retry_after=in_a_minute)
    assert decision.action == "retry"
    assert 58 <= decision.delay <= 60
    next_year = format_datetime(datetime.now(UTC) + timedelta(days=365), usegmt=True)
    assert POLICY.delay(1, retry_after=next_year) == POLICY.max_retry_after
    yesterday = format_datetime(datetime.now(UTC) - timedelta(days=1), usegmt=True)
    assert POLICY.delay(1, retry_after=yesterday) == POLICY.delay(1)  # no wait asked: the backoff stands
