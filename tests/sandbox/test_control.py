"""The /_sandbox/ control surface and fault injection on /api/rest."""

from __future__ import annotations

import time

import httpx
import pytest

from sendframe.sandbox import Sandbox

SMS = {"message": "x", "to": ["447700900001"], "from": "Shop"}


@pytest.fixture(scope="module")
def sb():
    with Sandbox(clock="manual") as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def clean(sb):
    sb.reset()
    yield
    sb.clear_faults()


def send(sb, **kw):
    return httpx.post(f"{sb.base_url}/api/rest/sms", json=SMS, auth=(sb.username, sb.api_password), **kw)


def test_messages_lists_every_channel_with_status_and_events(sb):
    send(sb)
    httpx.post(f"{sb.base_url}/api/rest/voiceAudio", json={"to": ["447700900001"], "audioUrl": "https://x.example/a.mp3"},
               auth=(sb.username, sb.api_password))
    data = httpx.get(f"{sb.base_url}/_sandbox/messages").json()["data"]
    assert {m["channel"] for m in data} == {"sms", "voiceAudio"}
    assert all("status" in m and isinstance(m["events"], list) for m in data)


def test_reset_forgets_messages_and_campaign_numbers(sb):
    first = send(sb).json()
    sb.reset()
    assert sb.messages().empty
    assert send(sb).json()["campaignId"] == first["campaignId"] == 1


def test_advance_answers_what_was_done(sb):
    send(sb)
    done = sb.advance(10)
    assert done["done"].get("step_delivered") == 1
    assert done["pending"] == {"steps": 0, "notifications": 0}


@pytest.mark.parametrize("body", [{"seconds": -1}, {"seconds": "5"}, {}, [1]])
def test_advance_refuses_bad_bodies(sb, body):
    r = httpx.post(f"{sb.base_url}/_sandbox/advance", json=body)
    assert r.status_code == 400 and r.json()["error"]["code"] == 100


def test_advance_needs_a_manual_clock():
    with Sandbox() as real:
        r = httpx.post(f"{real.base_url}/_sandbox/advance", json={"seconds": 1})
    assert r.status_code == 409 and "manual" in r.json()["error"]["description"]


def test_control_routes_are_not_under_api_rest(sb):
    r = httpx.get(f"{sb.base_url}/api/rest/_sandbox/messages", auth=(sb.username, sb.api_password))
    assert r.status_code == 404


@pytest.mark.parametrize("status", [500, 503])
def test_injected_server_errors_answer_error_objects_without_processing(sb, status):
    sb.faults(status=status, rate=1)
    r = send(sb)
    assert r.status_code == status and r.json()["error"]["code"] == status
    assert sb.messages().empty


def test_injected_429_carries_retry_after(sb):
    sb.faults(status=429, retry_after=7)
    r = send(sb)
    assert r.status_code == 429 and r.headers["retry-after"] == "7"


def test_faults_apply_only_to_api_rest(sb):
    sb.faults(status=500)
    assert httpx.get(f"{sb.base_url}/_sandbox/faults").json()["faults"]["status"] == 500
    assert httpx.get(f"{sb.base_url}/openapi.json").status_code == 200


def test_drop_processes_the_request_then_closes_the_connection_without_an_answer(sb):
    sb.faults(drop=1)
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        send(sb)
    sb.clear_faults()
    assert len(sb.messages()) == 1  # the message was accepted all the same
    assert send(sb).status_code == 202


def test_delay_slows_answers(sb):
    sb.faults(delay_s=0.3)
    started = time.monotonic()
    assert send(sb).status_code == 202
    assert time.monotonic() - started >= 0.3


def test_faults_are_cleared_by_post_clear_and_bad_faults_refused(sb):
    sb.faults(status=500)
    httpx.post(f"{sb.base_url}/_sandbox/faults/clear", json={})
    assert send(sb).status_code == 202
    r = httpx.post(f"{sb.base_url}/_sandbox/faults", json={"status": 418})
    assert r.status_code == 400 and "status" in r.json()["error"]["description"]
