"""The Composer and Monitor, driven as an analyst would: set values, click buttons."""

from __future__ import annotations

import pandas as pd

import sendframe
from sendframe.notebook.widgets import Composer, Monitor, counter_html, highlight, problems_html
from sendframe.sandbox import Sandbox

CONTACTS = pd.DataFrame({
    "phone": ["34600123456", "351912345678", "447700900001", "12"],
    "name": ["ana", "joão", "Zoë", "bad number"],
})


def test_highlight_marks_and_escapes():
    assert highlight("<b>é€😀", ["😀"]) == '&lt;b&gt;é€<mark title="outside GSM-7">😀</mark>'


def test_typing_updates_counter_and_preview():
    composer = Composer(CONTACTS, sender="Shop")
    composer.template.value = "Hi {name|upper}"
    assert "<b>4</b> recipients" in composer.counter.value
    assert "HI" not in composer.preview.value and "Hi ANA" in composer.preview.value
    assert "forced to utf-16 by <mark>Ë</mark>" in composer.counter.value
    # the Ë of Zoë is marked in the preview of the row that holds it
    assert '<mark title="outside GSM-7">Ë</mark>' in composer.preview.value
    composer.template.value = "Hi {name}"
    assert "Hi ana" in composer.preview.value


def test_missing_variable_and_bad_filter_are_shown_not_raised():
    composer = Composer(CONTACTS)
    composer.template.value = "Hi {nickname}"
    assert "4 rows miss a variable" in composer.counter.value
    assert "missing variable" in composer.preview.value
    composer.template.value = "Hi {name|shout}"
    assert "Unknown filter" in composer.counter.value


def test_parts_limit_shows_rows_that_need_more():
    composer = Composer(CONTACTS)
    composer.parts.value = 1
    composer.template.value = "x" * 165
    assert "rows need more parts than allowed" in composer.counter.value


def test_check_button_shows_the_preflight_table():
    composer = Composer(CONTACTS, sender="Shop")
    composer.template.value = "Hi {name}"
    composer.check_button.click()
    assert "problem(s)" in composer.problems.value
    assert "12" in composer.problems.value  # the invalid number is named


def test_send_asks_first_then_sends_through_the_sandbox(tmp_path):
    with Sandbox() as sb:
        client = sendframe.Client(sb.base_url, sb.username, sb.api_password)
        composer = Composer({"sample": CONTACTS}, client=client, sender="Shop", ledger=tmp_path / "ledger.sqlite")
        composer.template.value = "Hi {name}"
        composer.send_button.click()
        assert "Send this sms campaign to <b>4</b> recipients" in composer.confirmation.value
        assert composer.confirm_button.layout.display is None
        assert sb.messages().empty  # nothing is sent before the confirmation
        composer.cancel_button.click()
        assert sb.messages().empty and composer.confirmation.value == ""
        composer.send_button.click()
        composer.confirm_button.click()
        results = composer.results
        assert list(results["outcome"]) == ["accepted", "accepted", "accepted", "skipped_invalid"]
        stored = sb.messages()
        assert sorted(stored["recipient"]) == ["34600123456", "351912345678", "447700900001"]
        assert "accepted: <b>3</b>" in composer.status.value

        monitor = Monitor(results, client=client)
        monitor.refresh_button.click()
        assert monitor.outcomes is not None and len(monitor.outcomes) == 4
        assert "not sent (rejected by the API, or not attempted yet): <b>1</b>" in monitor.summary.value
        client.close()


def test_pure_helpers_render_plain_html():
    assert "No problems" in problems_html(pd.DataFrame(columns=["row", "column", "rule", "message"]))
    html = counter_html({"recipients": 1000, "encoding": "gsm ×1,000", "characters_max": 20, "parts": 1000,
                         "parts_max": 1, "cost": 45.0, "forced_by": "", "missing_text": 0, "too_many_parts": 0})
    assert "<b>1,000</b> recipients" in html and "cost <b>45.0000</b>" in html


def test_monitor_refreshes_in_the_background_until_every_message_is_final(tmp_path):
    import time

    with Sandbox(clock="manual") as sb, sendframe.Receiver(tmp_path / "callbacks.log") as receiver:
        client = sendframe.Client(sb.base_url, sb.username, sb.api_password)
        results = sendframe.send_sms(CONTACTS.iloc[:2], "Hi {name}", "Shop", client=client,
                                     notification_url=receiver.notification_url, progress=False)
        monitor = Monitor(results, receiver=receiver, client=client)
        monitor.start(interval=0.05)
        deadline = time.monotonic() + 10
        while monitor.refreshes < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert monitor.refreshes >= 2
        assert "pending: <b>2</b>" in monitor.summary.value  # the manual clock has not moved yet
        sb.advance(600)
        deadline = time.monotonic() + 10
        while "final status" not in monitor.summary.value and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "delivered: <b>2</b>" in monitor.summary.value and "final status" in monitor.summary.value
        monitor.stop()
        client.close()
