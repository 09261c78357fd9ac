"""Values put into HTML (landing pages, email subjects and bodies) are escaped, and the shared text engine
renders exactly what the sandbox serves (docs/api-notes.md, "Values in HTML")."""

from __future__ import annotations

import re

import httpx
import pandas as pd
import pytest

from sendframe.sandbox import Sandbox
from sendframe.text.templates import render, render_frame

SCRIPT = "<script>alert('x')</script>"
PEOPLE = [{"name": SCRIPT, "city": 'Lugo" onmouseover="x'}, {"name": "Tom & Jerry", "city": "<i>Vigo</i>"}]


@pytest.fixture(scope="module")
def sb():
    with Sandbox(clock="manual") as sandbox:
        yield sandbox


def _send(sb, channel: str, body: dict) -> dict:
    answer = httpx.post(f"{sb.base_url}/api/rest/{channel}", json=body, auth=(sb.username, sb.api_password))
    assert answer.status_code == 202, answer.text
    return answer.json()


def _stored(sb, result: dict):
    frame = sb.messages().set_index("id")
    return frame.loc[[item["id"] for item in result["result"]]]


def test_a_script_in_a_sub_value_is_shown_as_text_on_the_landing_page(sb):
    template = "<h1>Hello {name}</h1><p title=\"{city}\">{city|upper}</p>"
    result = _send(sb, "landingsms", {"to": ["447700900001", "447700900002"], "from": "Shop",
                                      "message": "See {LAND_URL}", "templateBody": template, "sub": PEOPLE})
    pages = []
    for text in _stored(sb, result)["message"]:
        link = re.search(rf"{re.escape(sb.base_url)}/l/[A-Za-z0-9]{{12}}", text).group(0)
        pages.append(httpx.get(link).text)
    assert "<script>" not in pages[0] and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in pages[0]
    assert 'title="Lugo&quot; onmouseover=&quot;x"' in pages[0]  # no way out of the attribute
    assert "<h1>Hello Tom &amp; Jerry</h1>" in pages[1] and "&lt;I&gt;VIGO&lt;/I&gt;" in pages[1]  # filter, then escape
    # the toolkit's engine gives exactly the served pages
    assert render_frame(pd.DataFrame(PEOPLE), template, escape_html=True).tolist() == pages
    assert [render(template, person, escape_html=True) for person in PEOPLE] == pages


def test_email_subject_and_body_escape_values_and_keep_the_templates_markup(sb):
    subject, body = "Hi {name}", "<p>Dear {name} from {city}</p><a href=\"https://shop.example/\">shop</a>"
    result = _send(sb, "mailing", {"to": ["a@example.com", "b@example.com"], "subject": subject, "body": body,
                                   "sub": PEOPLE, "fromEmail": "news@example.org", "replyTo": "news@example.org",
                                   "trackOpens": False, "trackClicks": False})
    stored = _stored(sb, result)
    frame = pd.DataFrame(PEOPLE)
    assert stored["message"].tolist() == render_frame(frame, body, escape_html=True).tolist()
    assert [extra["subject"] for extra in stored["extra"]] == render_frame(frame, subject, escape_html=True).tolist()
    first = stored["message"].iloc[0]
    assert "<script>" not in first and '<a href="https://shop.example/">' in first


def test_an_sms_text_is_not_html_and_is_not_escaped(sb):
    result = _send(sb, "sms", {"to": ["447700900003"], "from": "Shop", "message": "Hi {name}", "parts": 2,
                               "sub": [{"name": "Tom & <Jerry>"}]})
    assert _stored(sb, result)["message"].iloc[0] == "Hi Tom & <Jerry>"


def test_a_link_value_keeps_working_once_escaped_and_is_tracked(sb):
    body = '<a href="{url}">offer</a>'
    result = _send(sb, "mailing", {"to": ["c@example.com"], "subject": "x", "body": body, "trackOpens": False,
                                   "sub": [{"url": "https://shop.example/?a=1&b=2"}],
                                   "fromEmail": "news@example.org", "replyTo": "news@example.org"})
    html = _stored(sb, result)["message"].iloc[0]
    link = re.search(rf'href="({re.escape(sb.base_url)}/s/[A-Za-z0-9]{{8}})"', html).group(1)
    assert httpx.get(link).headers["location"] == "https://shop.example/?a=1&b=2"
