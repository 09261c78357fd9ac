"""The Composer's Send over the real sandbox, buttons clicked as an analyst would.

Every channel reaches the sandbox once per recipient; Send runs in the background (the click
returns before the send ends); Cancel starts no new batch; the default ledger keeps a second
press, or a second Composer (the notebook run again), from sending anyone twice.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.command import add_arguments, run
from sendframe.notebook.composer import Composer

CONTACTS = pd.DataFrame({
    "phone": ["34600123456", "351912345678", "447700900001", "12", "34600123456"],
    "email": ["ana@example.com", "joao@example.com", "zoe@example.com", "nobody", "ana@example.com"],
    "name": ["ana", "joão", "Zoë", "bad", "ana again"],
    "city": ["Lugo", "Porto", "York", "Nowhere", "Lugo"],
})
PHONES = ["34600123456", "351912345678", "447700900001"]
EMAILS = ["ana@example.com", "joao@example.com", "zoe@example.com"]

FORMS = {
    "sms": {"message": "Hi {name}", "sender": "Shop"},
    "landingsms": {"message": "{name}: {LAND_URL}", "sender": "Shop", "template_body": "<p>Hi {name}</p>"},
    "mailing": {"subject": "Hi {name}", "body": "<p>From {city}</p>", "from_email": "news@example.org"},
    "voice": {"message": "Hola {name}", "language": "es_ES", "gender": "M"},
    "voiceAudio": {"audio_url": "https://example.org/a.mp3"},
    "whatsapp": {"template_id": 1003, "sender": "34911111111", "header_fields": ["city"],
                 "body_fields": ["name", "city"], "call_to_action_fields": ["name"]},
}


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """The notebook's folder: the default ledger is written here."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _send(composer: Composer, timeout: float = 60) -> pd.DataFrame:
    composer.send_button.click()
    assert composer.confirm_button.layout.display is None, composer.status.value
    composer.confirm_button.click()
    results = composer.wait(timeout)
    assert results is not None, composer.status.value
    return results


@pytest.mark.parametrize("channel", list(FORMS))
def test_each_channel_reaches_the_sandbox_once_per_recipient(sb, client, in_tmp, channel):
    sb.reset()
    composer = Composer({"spring": CONTACTS}, client=client, channel=channel, **FORMS[channel])
    results = _send(composer)
    assert list(results["outcome"]) == ["accepted"] * 3 + ["skipped_invalid", "skipped_duplicate"]
    stored = sb.messages()
    assert set(stored["channel"]) == {channel}
    assert sorted(stored["recipient"]) == sorted(EMAILS if channel == "mailing" else PHONES)
    assert (in_tmp / composer.ledger_path).exists()


def test_pressing_send_twice_or_running_the_notebook_again_sends_no_one_twice(sb, client, in_tmp):
    sb.reset()
    composer = Composer({"spring": CONTACTS}, client=client, **FORMS["sms"])
    ledger = composer.ledger_path
    assert ledger.name.startswith("spring-") and str(ledger) in composer.ledger_line.value
    _send(composer)
    again = _send(composer)
    assert again["outcome"].eq("accepted").sum() == 3
    assert "Nothing new was sent" in composer.status.value
    rerun = Composer({"spring": CONTACTS}, client=client, **FORMS["sms"])  # the notebook run from the top again
    assert rerun.ledger_path == ledger
    _send(rerun)
    assert sorted(sb.messages()["recipient"]) == PHONES
    assert [p.name for p in in_tmp.glob("*.ledger.sqlite")] == [ledger.name]


def test_the_click_returns_before_the_send_ends_and_the_kernel_stays_free(sb, client, in_tmp):
    sb.reset()
    sb.faults(delay_s=0.4)  # each request takes 0.4 s
    composer = Composer({"spring": CONTACTS}, client=client, batch_size=1, concurrency=1, **FORMS["sms"])
    composer.send_button.click()
    started = time.perf_counter()
    composer.confirm_button.click()
    returned = time.perf_counter() - started
    assert returned < 0.3 and composer.running and composer.results is None
    assert composer.send_button.disabled and composer.cancel_button.layout.display is None
    composer.send_button.click()  # a second press while sending is refused, not a second send
    assert "already running" in composer.status.value
    results = composer.wait(30)
    assert time.perf_counter() - started > 1.0  # three requests of 0.4 s, one at a time
    assert results["outcome"].eq("accepted").sum() == 3 and not composer.running
    assert composer.progress_label.value == "<b>3</b> of <b>3</b> sent"
    assert len(sb.messages()) == 3


def test_cancel_starts_no_new_batch_and_send_again_finishes_the_rest(sb, client, in_tmp):
    sb.reset()
    many = pd.DataFrame({"phone": [f"3460012{i:04d}" for i in range(8)], "name": [f"n{i}" for i in range(8)]})
    sb.faults(delay_s=0.3)
    composer = Composer({"many": many}, client=client, batch_size=1, concurrency=1, **FORMS["sms"])
    composer.send_button.click()
    composer.confirm_button.click()
    deadline = time.monotonic() + 20
    while composer.progress.value < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    composer.cancel_button.click()
    results = composer.wait(30)
    sent = int(results["outcome"].eq("accepted").sum())
    assert 1 <= sent < 8 and results["outcome"].eq("not_sent").sum() == 8 - sent
    assert "Cancelled" in composer.status.value and "press Send again" in composer.status.value
    assert len(sb.messages()) == sent
    sb.clear_faults()
    finished = _send(composer)
    assert finished["outcome"].eq("accepted").all()
    assert sorted(sb.messages()["recipient"]) == sorted(many["phone"])  # each once


def test_a_failed_send_is_said_in_plain_english_without_credentials(sb, in_tmp, capfd):
    wrong = sendframe.Client(sb.base_url, sb.username, "not-the-s3cret-password")
    composer = Composer({"spring": CONTACTS}, client=wrong, **FORMS["sms"])
    composer.send_button.click()
    composer.confirm_button.click()
    assert composer.wait(30) is None
    assert isinstance(composer.error, sendframe.AuthenticationError)
    assert composer.status.value.startswith("<span style='color:#c62828'>Sending stopped: ")
    assert "Wrong username or API password" in composer.status.value
    assert "not-the-s3cret-password" not in composer.status.value
    assert "Traceback" not in composer.status.value + capfd.readouterr().err
    assert not composer.send_button.disabled  # ready to try again
    wrong.close()


def test_a_given_ledger_is_used_instead_of_the_default(sb, client, in_tmp):
    sb.reset()
    ledger = in_tmp / "mine" / "campaign.sqlite"
    ledger.parent.mkdir()
    composer = Composer(CONTACTS, client=client, ledger=ledger, **FORMS["sms"])
    _send(composer)
    assert Path(composer.ledger_path) == ledger and ledger.exists()
    assert not list(in_tmp.glob("*.ledger.sqlite"))


def test_a_send_without_credentials_says_how_to_give_them(in_tmp, monkeypatch):
    for name in ("SENDFRAME_BASE_URL", "SENDFRAME_USERNAME", "SENDFRAME_API_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    composer = Composer(CONTACTS, **FORMS["sms"])
    composer.send_button.click()
    composer.confirm_button.click()
    assert composer.wait(30) is None
    assert "Not sent: No base_url given" in composer.status.value
    assert "SENDFRAME_BASE_URL" in composer.status.value


def test_the_composer_resumes_what_sendframe_send_sent_from_the_same_file(sb, client, in_tmp, monkeypatch, capsys):
    sb.reset()
    CONTACTS.to_csv(in_tmp / "spring.csv", index=False)
    monkeypatch.setenv("SENDFRAME_BASE_URL", sb.base_url)
    monkeypatch.setenv("SENDFRAME_USERNAME", sb.username)
    monkeypatch.setenv("SENDFRAME_API_PASSWORD", sb.api_password)
    parser = argparse.ArgumentParser()
    add_arguments("send", parser)
    args = parser.parse_args(["spring.csv", "--message", "Hi {name}", "--sender", "Shop", "--no-progress"])
    assert run("send", args) == 0
    capsys.readouterr()
    [cli_ledger] = in_tmp.glob("*.ledger.sqlite")
    composer = Composer({"spring list": "spring.csv"}, client=client, **FORMS["sms"])
    assert composer.ledger_path == Path(cli_ledger.name)
    _send(composer)
    assert "Nothing new was sent" in composer.status.value
    assert sorted(sb.messages()["recipient"]) == PHONES
