"""Tracked links: short links, unsubscribe pages, landing pages, the open pixel; their makers and pages."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime
from types import SimpleNamespace

import httpx
import pytest

from sendframe.errors import InputError
from sendframe.sandbox import Sandbox, links, otp
from sendframe.sandbox.carrier import Clock

BASE = "http://127.0.0.1:8123"


@pytest.fixture
def state():
    db = sqlite3.connect(":memory:", check_same_thread=False)
    for statement in (*otp.SCHEMA, *links.SCHEMA):
        db.execute(statement)
    yield SimpleNamespace(db=db, clock=Clock("manual", start=datetime(2026, 11, 21, 9, 30, tzinfo=UTC)),
                          public_url=BASE + "/")
    db.close()


def _token(link: str, prefix: str, length: int, suffix: str = "") -> str:
    match = re.fullmatch(rf"{re.escape(BASE)}/{prefix}/([A-Za-z0-9]{{{length}}}){re.escape(suffix)}", link)
    assert match, link
    return match.group(1)


def test_short_link_is_public_url_s_and_eight_alphanumerics(state):
    _token(links.short_link(state, message_id="m1", url="https://shop.example/sale?a=1"), "s", 8)


def test_long_tokens_are_twelve_alphanumerics(state):
    _token(links.unsubscribe_link(state, account="demo", message_id="m1", recipient="447700900123"), "u", 12)
    _token(links.landing_link(state, message_id="m1", html="<p>hi</p>"), "l", 12)
    _token(links.open_pixel(state, message_id="m1"), "o", 12, ".gif")


def test_same_url_in_same_message_reuses_the_short_link_but_not_across_messages(state):
    url = "https://shop.example/sale"
    first = links.short_link(state, message_id="m1", url=url)
    assert links.short_link(state, message_id="m1", url=url) == first
    assert links.short_link(state, message_id="m2", url=url) != first


@pytest.mark.parametrize("url", ["javascript:alert(1)", "shop.example/sale", "ftp://x/y", "https://", ""])
def test_shorten_refuses_anything_but_an_http_url(state, url):
    with pytest.raises(InputError, match="http or https URL"):
        links.short_link(state, message_id="m1", url=url)


def test_tokens_are_random(state):
    tokens = {links.landing_link(state, message_id=f"m{i}", html="x") for i in range(200)}
    assert len(tokens) == 200


def test_nobody_is_unsubscribed_until_they_post(state):
    links.unsubscribe_link(state, account="demo", message_id="m1", recipient="447700900123")
    assert links.is_unsubscribed(state, account="demo", recipient="447700900123") is False


def test_recipient_key_trims_and_lowercases():
    assert links.recipient_key("  Ana@Example.COM ") == "ana@example.com"
    assert links.recipient_key("447700900123") == "447700900123"


# ---- through the live sandbox over HTTP -----------------------------------------------------------

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(clock="manual") as sb:
        yield sb


def _send(sb, channel: str, body: dict) -> tuple[int, dict]:
    answer = httpx.post(f"{sb.base_url}/api/rest/{channel}", json=body, auth=(sb.username, sb.api_password))
    return answer.status_code, answer.json()


def _record(sb, message_id: str) -> dict:
    answer = httpx.get(f"{sb.base_url}/api/rest/sms/{message_id}", auth=(sb.username, sb.api_password))
    assert answer.status_code == 200, answer.text
    return answer.json()["data"][0]


def _link_in(sb, text: str, prefix: str, length: int) -> str:
    match = re.search(rf"{re.escape(sb.base_url)}/{prefix}/[A-Za-z0-9]{{{length}}}", text)
    assert match, text
    return match.group(0)


def test_short_link_redirects_and_records_a_mobile_click(sandbox):
    status, body = _send(sandbox, "sms", {"to": ["447700900301"], "from": "Shop", "message": "Sale {url|shorten}",
                                          "sub": [{"url": "https://shop.example/sale?x=1"}]})
    assert status == 202, body
    message_id = body["result"][0]["id"]
    link = _link_in(sandbox, _record(sandbox, message_id)["message"], "s", 8)

    assert httpx.head(link).status_code == 302  # a HEAD (link preview) records nothing
    assert _record(sandbox, message_id)["isClicked"] is False

    answer = httpx.get(link, headers={"User-Agent": IPHONE}, follow_redirects=False)
    assert answer.status_code == 302
    assert answer.headers["location"] == "https://shop.example/sale?x=1"
    record = _record(sandbox, message_id)
    assert record["isClicked"] is True
    clicks = [e for e in record["events"] if e["type"] == "clicked"]
    assert len(clicks) == 1
    assert (clicks[0]["isMobile"], clicks[0]["os"]) == (True, "iOS")
    assert "Safari" in clicks[0]["browser"]


def test_unsubscribe_get_only_shows_a_form_and_post_unsubscribes(sandbox):
    to = "447700900302"
    request = {"to": [to], "from": "Shop", "message": "News. Stop: {UNSUB_URL}"}
    status, body = _send(sandbox, "sms", request)
    assert status == 202, body
    message_id = body["result"][0]["id"]
    link = _link_in(sandbox, _record(sandbox, message_id)["message"], "u", 12)

    page = httpx.get(link)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<form method="post"' in page.text
    assert _send(sandbox, "sms", request)[0] == 202  # a GET (mail scanner) did not unsubscribe

    done = httpx.post(link)
    assert done.status_code == 200 and "You are unsubscribed" in done.text
    assert httpx.post(link).status_code == 200  # repeating changes nothing
    assert [e["type"] for e in _record(sandbox, message_id)["events"]].count("unsubscribed") == 1

    status, body = _send(sandbox, "sms", request)
    assert status == 400 and body["error"]["code"] == 108


def test_landing_page_serves_the_rendered_html_and_records_a_click(sandbox):
    status, body = _send(sandbox, "landingsms", {"to": ["447700900303"], "from": "Shop", "message": "See {LAND_URL}",
                                                 "templateBody": "<h1>Hello {name}</h1>", "sub": [{"name": "Ana"}]})
    assert status == 202, body
    message_id = body["result"][0]["id"]
    link = _link_in(sandbox, _record(sandbox, message_id)["message"], "l", 12)

    page = httpx.get(link)
    assert page.status_code == 200
    assert "<h1>Hello Ana</h1>" in page.text
    assert page.headers["content-security-policy"].startswith("sandbox")
    assert _record(sandbox, message_id)["isClicked"] is True


@pytest.mark.parametrize("path", ["/s/AAAAAAAA", "/s/short", "/l/AAAAAAAAAAAA", "/u/AAAAAAAAAAAA",
                                  "/o/AAAAAAAAAAAA.gif", "/u/AAAA"])
def test_unknown_tokens_answer_a_plain_html_404(sandbox, path):
    answer = httpx.get(sandbox.base_url + path)
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html")
    assert "Link not found" in answer.text
