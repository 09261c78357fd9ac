"""Who may use the control surface, and what the sandbox's pages may do in a browser (docs/sandbox.md, threat model).

Every request goes over real HTTP to a real sandbox, with the headers a browser would send for a hostile page.
"""

from __future__ import annotations

import argparse
import re
from urllib.parse import urlsplit

import httpx
import pytest

from sendframe.sandbox import Sandbox
from sendframe.sandbox.command import add_arguments

SMS = {"message": "x", "to": ["447700900001"], "from": "Shop"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def sb():
    with Sandbox(clock="manual") as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def one_message(sb):
    sb.reset()
    sb.clear_faults()
    assert httpx.post(f"{sb.base_url}/api/rest/sms", json=SMS, auth=(sb.username, sb.api_password)).status_code == 202
    yield
    sb.clear_faults()


def _port(sb) -> int:
    return urlsplit(sb.base_url).port


def _refused(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    return answer.json()["error"]["description"]


def test_a_foreign_host_cannot_reset_even_with_a_form_body(sb):
    # the attack: a page whose DNS name rebinds to 127.0.0.1 submits a form to /_sandbox/reset
    answer = httpx.post(f"{sb.base_url}/_sandbox/reset", content="x=1", headers={**FORM, "Host": "attacker.example"})
    assert "loopback name" in _refused(answer, 403)
    assert len(sb.messages()) == 1


def test_a_foreign_host_cannot_read_the_messages(sb):
    answer = httpx.get(f"{sb.base_url}/_sandbox/messages", headers={"Host": f"attacker.example:{_port(sb)}"})
    assert "attacker.example" in _refused(answer, 403)
    assert "447700900001" not in answer.text


@pytest.mark.parametrize("origin", ["null", "http://attacker.example", "http://127.0.0.1:1", "https://localhost"])
def test_a_page_of_another_origin_cannot_switch_on_faults(sb, origin):
    answer = httpx.post(f"{sb.base_url}/_sandbox/faults", json={"status": 503}, headers={"Origin": origin})
    assert "another origin" in _refused(answer, 403)
    assert httpx.get(f"{sb.base_url}/_sandbox/faults").json()["faults"] is None


def test_a_cross_site_fetch_is_refused_by_its_fetch_metadata(sb):
    answer = httpx.get(f"{sb.base_url}/_sandbox/messages", headers={"Sec-Fetch-Site": "cross-site"})
    assert "another site" in _refused(answer, 403)


@pytest.mark.parametrize("headers", [FORM, {"Content-Type": "text/plain"},
                                     {"Content-Type": "multipart/form-data; boundary=x"}, {}])
def test_a_post_without_a_json_body_type_changes_nothing(sb, headers):
    # what a form or a "simple" cross-origin request can send; the Origin: null + text/plain faults switch
    answer = httpx.post(f"{sb.base_url}/_sandbox/faults", content='{"status": 503}', headers=headers)
    assert "application/json" in _refused(answer, 415)
    answer = httpx.post(f"{sb.base_url}/_sandbox/reset", content="{}", headers=headers)
    assert answer.status_code == 415
    assert httpx.get(f"{sb.base_url}/_sandbox/faults").json()["faults"] is None
    assert len(sb.messages()) == 1


def test_the_analysts_own_requests_are_answered_by_loopback_name_and_own_origin(sb):
    port = _port(sb)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"):
        assert httpx.get(f"{sb.base_url}/_sandbox/messages", headers={"Host": host}).status_code == 200, host
    own = {"Origin": sb.base_url, "Sec-Fetch-Site": "same-origin"}
    assert httpx.post(f"{sb.base_url}/_sandbox/advance", json={"seconds": 1}, headers=own).status_code == 200
    assert httpx.post(f"{sb.base_url}/_sandbox/faults", json={"delay_s": 0.01},
                      headers={"Content-Type": "application/json; charset=utf-8"}).status_code == 200
    assert httpx.delete(f"{sb.base_url}/_sandbox/faults").json() == {"faults": None}  # a DELETE needs no body
    assert httpx.post(f"{sb.base_url}/_sandbox/reset", json={}).status_code == 200
    assert sb.messages().empty


def test_reset_and_clear_take_only_a_json_object(sb):
    answer = httpx.post(f"{sb.base_url}/_sandbox/reset", json=[1])
    assert "JSON object" in _refused(answer, 400)
    answer = httpx.post(f"{sb.base_url}/_sandbox/faults/clear", content=b"",
                        headers={"Content-Type": "application/json"})
    assert "empty" in _refused(answer, 400)
    assert len(sb.messages()) == 1


def _landing_link(sb) -> str:
    body = {"to": ["447700900002"], "from": "Shop", "message": "See {LAND_URL}", "sub": [{"name": "Ana"}],
            "templateBody": "<h1>Hi {name}</h1><form method='post' action='/_sandbox/reset'><button>go</button></form>"
                            "<script>fetch('/_sandbox/messages')</script>"}
    answer = httpx.post(f"{sb.base_url}/api/rest/landingsms", json=body, auth=(sb.username, sb.api_password))
    assert answer.status_code == 202, answer.text
    text = sb.messages().iloc[-1]["message"]
    return re.search(rf"{re.escape(sb.base_url)}/l/[A-Za-z0-9]{{12}}", text).group(0)


def test_a_landing_page_is_served_sandboxed_without_scripts_or_forms(sb):
    page = httpx.get(_landing_link(sb))
    policy = page.headers["content-security-policy"]
    directives = {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}
    assert "sandbox" in directives  # an opaque origin: its requests carry Origin: null
    assert not {"allow-scripts", "allow-forms", "allow-same-origin"} & set(directives["sandbox"])
    assert directives["default-src"] == ["'none'"] and directives["form-action"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert page.headers["referrer-policy"] == "no-referrer"


def test_what_a_landing_page_could_still_send_is_refused(sb):
    _landing_link(sb)
    # a sandboxed page has an opaque origin: a browser sends Origin: null and Sec-Fetch-Site: cross-site
    from_page = {"Origin": "null", "Sec-Fetch-Site": "cross-site"}
    assert httpx.post(f"{sb.base_url}/_sandbox/reset", json={}, headers=from_page).status_code == 403
    assert httpx.get(f"{sb.base_url}/_sandbox/messages", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert len(sb.messages()) == 2


def test_the_sandboxs_own_pages_load_nothing_and_cannot_be_framed(sb):
    answer = httpx.post(f"{sb.base_url}/api/rest/sms", auth=(sb.username, sb.api_password),
                        json={**SMS, "to": ["447700900003"], "message": "Stop: {UNSUB_URL}", "parts": 2})
    text = sb.messages().iloc[-1]["message"]
    assert answer.status_code == 202
    link = re.search(rf"{re.escape(sb.base_url)}/u/[A-Za-z0-9]{{12}}", text).group(0)
    for page in (httpx.get(link), httpx.get(f"{sb.base_url}/u/AAAAAAAAAAAA")):
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy and "form-action 'self'" in policy
        assert page.headers["x-content-type-options"] == "nosniff"


def test_forwarded_for_is_ignored_unless_the_sandbox_trusts_a_proxy(sb):
    claimed = {"X-Forwarded-For": "203.0.113.9"}
    # by default a loopback client claiming another address is still the loopback client it is
    assert httpx.post(f"{sb.base_url}/api/rest/sms", json=SMS, auth=(sb.username, sb.api_password),
                      headers=claimed).status_code == 202
    assert httpx.get(f"{sb.base_url}/_sandbox/messages", headers=claimed).status_code == 200
    with Sandbox(clock="manual", trust_proxy=True) as proxied:
        # behind a trusted local proxy the forwarded client is who asks: not registered, not local
        answer = httpx.post(f"{proxied.base_url}/api/rest/sms", json=SMS, auth=(proxied.username, proxied.api_password),
                            headers=claimed)
        assert answer.status_code == 403 and "203.0.113.9" in answer.json()["error"]["description"]
        assert httpx.get(f"{proxied.base_url}/_sandbox/messages", headers=claimed).status_code == 404
        assert httpx.get(f"{proxied.base_url}/_sandbox/messages").status_code == 200


def test_the_command_trusts_a_proxy_only_when_told():
    parser = argparse.ArgumentParser()
    add_arguments("sandbox", parser)
    assert parser.parse_args([]).trust_proxy is False
    assert parser.parse_args(["--trust-proxy"]).trust_proxy is True
