"""The Composer and Monitor, driven as an analyst would: set values, click buttons (no front end)."""

from __future__ import annotations

import time

import pandas as pd
import pytest

import sendframe
from sendframe.errors import InputError
from sendframe.notebook.composer import Composer
from sendframe.notebook.form import CHANNEL_INPUTS
from sendframe.notebook.monitor import Monitor
from sendframe.notebook.widget_html import counter_html, highlight, problems_html
from sendframe.sandbox import Sandbox

CONTACTS = pd.DataFrame({
    "phone": ["34600123456", "351912345678", "447700900001", "12"],
    "name": ["ana", "joão", "Zoë", "bad number"],
})


def test_highlight_marks_and_escapes():
    assert highlight("<b>é€😀", ["😀"]) == '&lt;b&gt;é€<mark title="outside GSM-7">😀</mark>'


def test_typing_updates_counter_and_preview():
    composer = Composer(CONTACTS, sender="Shop", encoding="auto")
    composer.inputs["message"].value = "Hi {name|upper}"
    assert "<b>3</b> recipients" in composer.counter.value  # the rows the send sends to: "12" is not a number
    assert "HI" not in composer.preview.value and "Hi ANA" in composer.preview.value
    assert "forced to utf-16 by <mark>Ë</mark>" in composer.counter.value
    # the Ë of Zoë is marked in the preview of the row that holds it
    assert '<mark title="outside GSM-7">Ë</mark>' in composer.preview.value
    composer.inputs["message"].value = "Hi {name}"
    assert "Hi ana" in composer.preview.value


def test_the_composer_holds_the_one_message_the_library_would_build():
    composer = Composer(CONTACTS, sender="Shop", message="Hi {name}", parts=2, encoding="gsm-pt")
    assert composer.message == sendframe.sms("Hi {name}", sender="Shop", parts=2, encoding="gsm-pt")
    composer.parts.value = 1  # the service's default: left out, as the library and the CLI leave it
    assert composer.message == sendframe.sms("Hi {name}", sender="Shop", encoding="gsm-pt")
    # the preview is the message's own rendering
    assert composer.message.render(CONTACTS)[0] in composer.preview.value


def test_missing_variable_and_bad_filter_are_shown_not_raised():
    composer = Composer(CONTACTS)
    composer.inputs["message"].value = "Hi {nickname}"
    assert "4 rows miss a variable" in composer.counter.value
    assert "missing variable" in composer.preview.value
    composer.inputs["message"].value = "Hi {name|shout}"
    assert "Unknown filter" in composer.counter.value


def test_an_incomplete_message_still_previews_and_says_what_is_missing():
    composer = Composer(CONTACTS, message="Hi {name}")  # no sender yet
    assert "Hi ana" in composer.preview.value
    assert "fill in From" in composer.readiness.value
    with pytest.raises(InputError, match="fill in From"):
        _ = composer.message
    composer.send_button.click()
    assert "fill in From" in composer.status.value and composer.confirmation.value == ""
    composer.sender.value = "Shop"
    assert composer.readiness.value == "" and composer.message.fields["from"] == "Shop"


def test_parts_limit_shows_rows_that_need_more():
    composer = Composer(CONTACTS)
    composer.parts.value = 1
    composer.inputs["message"].value = "x" * 165
    assert "rows need more parts than allowed" in composer.counter.value


@pytest.mark.parametrize("channel", list(CHANNEL_INPUTS))
def test_only_the_inputs_the_channel_uses_are_shown(channel):
    composer = Composer(CONTACTS, channel=channel)
    shown = {name for name, control in composer.inputs.items() if control.layout.display != "none"}
    assert shown == set(CHANNEL_INPUTS[channel])


def test_switching_channel_relabels_the_text_and_bounds_the_parts():
    contacts = CONTACTS.assign(email=["ana@example.com", "joao@example.com", "zoe@example.com", "nobody"])
    composer = Composer(contacts, message="<p>Hi {name}</p>", channel="landingsms")
    assert composer.parts.max == 8
    composer.channel.value = "mailing"  # the text travels to the mailing's body
    assert composer.body.description == "Body (HTML)" and composer.body.value == "<p>Hi {name}</p>"
    composer.set(subject="News for {name}", from_email="news@example.org")
    assert "News for ana — Hi ana" in composer.preview.value
    assert composer.message.fields["replyTo"] == "news@example.org"
    composer.set(channel="voice", language="pt_BR", gender="M")
    assert composer.inputs["message"].description == "Spoken text"
    assert composer.message.fields == {"message": "<p>Hi {name}</p>", "language": "pt_BR", "gender": "M"}


def test_whatsapp_field_columns_are_picked_from_the_tables_columns():
    composer = Composer(CONTACTS, channel="whatsapp", sender="34911111111", template_id=1002)
    assert set(composer.body_fields.allowed_tags) == {"phone", "name"}
    composer.body_fields.value = ["name"]
    assert composer.message.whatsapp_columns == {"bodyFields": ("name",)}
    assert "body: joão" in composer.preview.value
    composer.call_to_action_fields.value = ["phone"]
    assert "body: joão · button: " in composer.preview.value  # named as its input


def test_check_button_shows_the_preflight_table_and_what_a_send_skips():
    composer = Composer(CONTACTS, sender="Shop")
    composer.inputs["message"].value = "Hi {name}"
    composer.check_button.click()
    assert "problem(s)" in composer.problems.value
    assert "12" in composer.problems.value  # the invalid number is named
    assert "1 of 4 rows not sent" in composer.problems.value


def test_send_asks_first_then_sends_through_the_sandbox(tmp_path):
    with Sandbox() as sb:
        client = sendframe.Client(sb.base_url, sb.username, sb.api_password)
        composer = Composer({"sample": CONTACTS}, client=client, sender="Shop", ledger=tmp_path / "ledger.sqlite")
        composer.inputs["message"].value = "Hi {name}"
        composer.send_button.click()
        assert "Send this sms campaign to <b>3</b> recipients" in composer.confirmation.value
        assert "1 of 4 rows not sent" in composer.confirmation.value
        assert composer.confirm_button.layout.display is None
        assert sb.messages().empty  # nothing is sent before the confirmation
        composer.back_button.click()
        assert sb.messages().empty and composer.confirmation.value == ""
        composer.send_button.click()
        composer.confirm_button.click()
        results = composer.wait(30)
        assert list(results["outcome"]) == ["accepted", "accepted", "accepted", "skipped_invalid"]
        stored = sb.messages()
        assert sorted(stored["recipient"]) == ["34600123456", "351912345678", "447700900001"]
        assert "accepted: <b>3</b>" in composer.status.value
        assert "skipped: invalid recipient: <b>1</b>" in composer.status.value
        assert (composer.progress.value, composer.progress.max) == (3, 3)

        monitor = Monitor(results, client=client)
        monitor.refresh_button.click()
        assert monitor.outcomes is not None and len(monitor.outcomes) == 4
        # the skipped row has its own count, apart from the delivery statuses of the rows sent
        assert "skipped (invalid recipient): <b>1</b>" in monitor.summary.value
        assert "not sent" not in monitor.summary.value
        client.close()


def test_pure_helpers_render_plain_html():
    assert "No problems" in problems_html(pd.DataFrame(columns=["row", "column", "rule", "message"]))
    html = counter_html({"recipients": 1000, "encoding": "gsm ×1,000", "characters_max": 20, "parts": 1000,
                         "parts_max": 1, "cost": 45.0, "forced_by": "", "missing_text": 0, "too_many_parts": 0})
    assert "<b>1,000</b> recipients" in html and "cost <b>45.0000</b>" in html


def test_monitor_refreshes_in_the_background_until_every_message_is_final(tmp_path):
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
        # the simulated carrier decides each message's fate: both are final, whichever it is
        assert "final status" in monitor.summary.value and "pending" not in monitor.summary.value
        assert monitor.outcomes is not None and monitor.outcomes["status"].ne("PENDING").all()
        monitor.stop()
        client.close()


def test_a_failing_background_refresh_is_said_under_the_monitors_summary():
    class BrokenReceiver:
        def callbacks(self):
            raise OSError("the callback log is gone")

    monitor = Monitor(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}), receiver=BrokenReceiver())
    monitor.start(interval=0.05)
    deadline = time.monotonic() + 10
    while "stopped" not in monitor.summary.value and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Refreshing stopped" in monitor.summary.value and "the callback log is gone" in monitor.summary.value
    monitor.stop()


def test_the_monitor_compares_a_split_tests_variants_with_anytime_valid_intervals(tmp_path):
    with Sandbox(clock="manual") as sb, sendframe.Client(sb.base_url, sb.username, sb.api_password) as client:
        contacts = pd.DataFrame({"phone": [f"447700900{i:03d}" for i in range(60)], "name": "Ana"})
        contacts = sendframe.assign_variants(contacts, {"A": 0.5, "B": 0.5}, seed=3)
        test = sendframe.variants({"A": sendframe.sms("Hi {name}", sender="Shop"),
                                   "B": sendframe.sms("{name}, today only", sender="Shop")})
        results = test.send(contacts, client=client, ledger=tmp_path / "ab.sqlite", progress=False)
        sb.advance(3600)
        monitor = Monitor(results, client=client, compare="delivered")
        monitor.refresh_button.click()
    comparison = monitor.comparison
    assert comparison is not None
    b = comparison.set_index("variant").loc["B"]
    assert b["test"] == "asymptotic confidence sequence (anytime-valid)"
    assert b["difference_low"] <= b["difference"] <= b["difference_high"]
    delivered = monitor.outcomes.assign(variant=results["variant"])  # type: ignore[union-attr]
    in_b = delivered[(delivered["variant"] == "B") & (delivered["outcome"] == "accepted")]
    assert b["successes"] == (in_b["status"] == "DELIVRD").sum()
    assert "anytime-valid" in monitor.comparison_view.value and "<td>B</td>" in monitor.comparison_view.value
    with pytest.raises(InputError, match="'variant' column"):
        Monitor(results.drop(columns="variant"), compare="delivered")


def test_a_message_written_once_elsewhere_starts_the_composer_unchanged():
    msg = sendframe.sms("Hi {name}", sender="Shop", parts=2, encoding="auto", campaign_name="spring",
                        schedule_date="20300101100000", to="phone")
    composer = Composer(CONTACTS, message=msg)
    assert composer.message == msg  # the inputs show it; the fields no input shows are kept
    shown = (composer.inputs["message"].value, composer.sender.value, composer.campaign_name.value)
    assert shown == ("Hi {name}", "Shop", "spring")
    composer.set(parts=3)
    assert composer.message == msg.replace(parts=3)
    composer.set(channel="voice")  # another channel: the SMS-only extras stay behind
    assert "scheduleDate" not in composer.message.fields


@pytest.mark.parametrize("channel", ["mailing", "voiceAudio", "whatsapp", "landingsms"])
def test_every_channels_message_round_trips_through_the_composer(channel):
    contacts = CONTACTS.assign(email="a@example.com", city="Lugo")
    msg = {
        "mailing": lambda: sendframe.mailing("Hi {name}", "<p>x</p>", from_email="news@example.org",
                                             reply_to="r@example.org"),
        "voiceAudio": lambda: sendframe.voice_audio("https://example.org/a.mp3", campaign_name="c"),
        "whatsapp": lambda: sendframe.whatsapp(1003, "34911111111", header_fields=["city"],
                                               body_fields=["name", "city"], call_to_action_fields=["name"]),
        "landingsms": lambda: sendframe.landing_sms("{name}: {LAND_URL}", "Shop", encoding="gsm-pt", trans=1),
    }[channel]()
    assert Composer(contacts, message=msg).message == msg


def test_the_messages_settings_no_input_shows_travel_with_it(tmp_path):
    msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto", local_time="10:00", frequency_cap=(1, 7),
                        history=tmp_path, suppression=["351912345678"])
    composer = Composer(CONTACTS, message=msg)
    assert composer.message == msg
    composer.check_button.click()  # the message's own suppression list and frequency cap
    assert "skipped_suppressed" in composer.problems.value
    given = Composer(CONTACTS, message="Hi", sender="Shop", suppression=["34600123456"])
    assert list(given.message.suppression) == ["34600123456"]
