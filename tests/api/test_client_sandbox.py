"""The clients against the real sandbox over HTTP: every channel, 207, 400, auth, faults."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from sendframe.api.client import AsyncClient, Client, RetryPolicy
from sendframe.api.models import SmsRequest
from sendframe.errors import ApiError, AuthenticationError, NotFoundError, NotSentError, UnknownOutcomeError
from tests.conftest import FAST_RETRY as FAST

GOOD, OTHER, BAD = "447911100001", "447911100002", "12"


@pytest.fixture
def client(sb):
    sb.clear_faults()
    with Client(sb.base_url, sb.username, sb.api_password, retry=FAST, timeout=10) as c:
        yield c
    sb.clear_faults()


def _messages_to(sb, recipient):
    messages = sb.messages()
    return messages[messages["recipient"] == recipient]


CHANNEL_REQUESTS = {
    "sms": {"message": "Hi {name}", "to": [GOOD], "from": "Shop", "sub": [{"name": "Ana"}]},
    "mailing": {"to": ["ana@example.com"], "fromEmail": "news@example.org", "replyTo": "news@example.org",
                "subject": "Hello", "body": "<p>Hi</p>"},
    "voice": {"message": "Hello", "to": [GOOD], "language": "en_GB", "gender": "F"},
    "voiceAudio": {"to": [GOOD], "audioUrl": "https://example.org/a.mp3"},
    "landingsms": {"message": "See {LAND_URL}", "to": [GOOD], "from": "Shop", "templateBody": "<p>Hi</p>"},
    "whatsapp": {"templateId": 1002, "from": "34911111111", "messages": [{"to": GOOD, "bodyFields": ["Ana"]}]},
}


@pytest.mark.parametrize("channel", list(CHANNEL_REQUESTS))
def test_every_channel_is_accepted_with_one_id_per_recipient(client, channel):
    answer = client.send(channel, CHANNEL_REQUESTS[channel])
    assert answer.campaign_id > 0 and answer.sending_id > 0
    assert [item.accepted for item in answer.result] == [True]
    assert len(answer.result[0].id) == 20


def test_the_named_methods_take_models_too(client):
    answer = client.send_sms(SmsRequest(message="Hi", to=[GOOD], sender="Shop"))
    record = client.get_sms([answer.result[0].id])[0]
    assert record.to == GOOD and record.message == "Hi"


def test_a_mixed_result_is_returned_item_by_item_not_raised(client):
    answer = client.send_sms({"message": "Hi", "to": [GOOD, BAD, OTHER], "from": "Shop"})
    assert [item.accepted for item in answer.result] == [True, False, True]
    assert answer.result[1].error.code == 102


def test_a_request_with_no_valid_recipient_raises_the_services_error(client):
    with pytest.raises(ApiError) as caught:
        client.send_sms({"message": "Hi", "to": [BAD], "from": "Shop"})
    assert (caught.value.status, caught.value.code) == (400, 102)
    assert caught.value.description


def test_wrong_credentials_raise_an_authentication_error_without_the_password(sb):
    with (Client(sb.base_url, sb.username, "not-the-password", retry=FAST) as wrong,
          pytest.raises(AuthenticationError) as caught):
        wrong.send_sms(CHANNEL_REQUESTS["sms"])
    assert caught.value.code == 401
    assert "not-the-password" not in str(caught.value)


def test_a_lookup_of_unknown_ids_raises_not_found(client):
    with pytest.raises(NotFoundError) as caught:
        client.get_sms(["0" * 20])
    assert caught.value.code == 404


def test_a_500_on_a_send_is_an_unknown_outcome_sent_once(sb, client):
    sb.faults(status=500, rate=1.0)
    recipient = "447911100500"
    with pytest.raises(UnknownOutcomeError) as caught:
        client.send_sms({"message": "Hi", "to": [recipient], "from": "Shop"})
    assert caught.value.status == 500
    assert "500" in caught.value.description
    assert len(_messages_to(sb, recipient)) <= 1  # never sent a second time


def test_a_dropped_connection_after_processing_is_unknown_and_not_resent(sb, client):
    sb.faults(drop=1.0)
    recipient = "447911100501"
    with pytest.raises(UnknownOutcomeError):
        client.send_sms({"message": "Hi", "to": [recipient], "from": "Shop"})
    assert len(_messages_to(sb, recipient)) == 1  # it was processed: a retry would have sent it twice


def test_a_429_is_retried_after_retry_after_and_then_sent_once(sb):
    sb.faults(status=429, rate=1.0, retry_after=1)
    recipient = "447911100502"
    clearer = threading.Timer(0.3, sb.clear_faults)
    clearer.start()
    started = time.monotonic()
    with Client(sb.base_url, sb.username, sb.api_password, retry=RetryPolicy(max_attempts=3, base_delay=0.01)) as c:
        answer = c.send_sms({"message": "Hi", "to": [recipient], "from": "Shop"})
    assert time.monotonic() - started >= 0.9  # waited for Retry-After
    assert answer.result[0].accepted
    assert len(_messages_to(sb, recipient)) == 1
    clearer.join()


def test_a_429_that_lasts_is_reported_as_not_sent(sb, client):
    sb.faults(status=429, rate=1.0, retry_after=0)
    recipient = "447911100503"
    with pytest.raises(NotSentError) as caught:
        client.send_sms({"message": "Hi", "to": [recipient], "from": "Shop"})
    assert caught.value.code == 429
    assert _messages_to(sb, recipient).empty


def test_the_async_client_shares_the_same_behaviour(sb):
    async def main():
        async with AsyncClient(sb.base_url, sb.username, sb.api_password, retry=FAST) as c:
            answers = await asyncio.gather(*(c.send_sms({"message": "Hi", "to": [f"4479111006{i:02d}"], "from": "Shop"})
                                             for i in range(5)))
            with pytest.raises(ApiError):
                await c.send_sms({"message": "Hi", "to": [BAD], "from": "Shop"})
            return answers

    answers = asyncio.run(main())
    assert all(a.result[0].accepted for a in answers)
