"""Tracked links: short links, unsubscribe pages, landing pages, the open pixel; their makers and pages."""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from sendframe.api.errors import InputError
from sendframe.sandbox import links, otp
from sendframe.sandbox.carrier import Clock

BASE = "http://127.0.0.1:8123"


@pytest.fixture
def state():
    db = sqlite3.connect(":memory:", check_same_thread=False)
    for statement in (*otp.SCHEMA, *links.SCHEMA):
        db.execute(statement)
    yield SimpleNamespace(db=db, clock=Clock("manual", start=datetime(2026, 11, 21, 9, 30, tzinfo=timezone.utc)), public_url=BASE + "/")
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
