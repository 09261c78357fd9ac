"""The Composer's inputs -> one Message, without a front end: the same message the library and the CLI build."""

from __future__ import annotations

import argparse
import threading
import warnings

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.command import add_arguments, message_from_args, message_ledger_path
from sendframe.channels import CHANNELS
from sendframe.errors import InputError, UnknownOptionError
from sendframe.notebook.form import (
    CHANNEL_INPUTS,
    FORM_DEFAULTS,
    INPUT_LABELS,
    checked_form,
    message_from_form,
    preview_message,
)
from sendframe.notebook.sending import BackgroundJob
from sendframe.notebook.widget_html import confirmation_html, error_html, outcome_counts, plain_error, result_html

# each channel: the form an analyst fills in, the library's own constructor call, the CLI's flags
CASES = {
    "sms": (dict(channel="sms", message="Hi {name}", sender="Shop", parts=2, encoding="gsm-pt", trans=True,
                 campaign_name="spring"),
            lambda: sendframe.sms("Hi {name}", sender="Shop", parts=2, encoding="gsm-pt", trans=1,
                                  campaign_name="spring"),
            ["--message", "Hi {name}", "--sender", "Shop", "--parts", "2", "--encoding", "gsm-pt", "--trans", "1",
             "--campaign-name", "spring"]),
    "landingsms": (dict(channel="landingsms", message="{name}: {LAND_URL}", sender="Shop",
                        template_body="<p>Hi</p>", encoding="auto"),
                   lambda: sendframe.landing_sms("{name}: {LAND_URL}", "Shop", template_body="<p>Hi</p>",
                                                 encoding="auto"),
                   ["--message", "{name}: {LAND_URL}", "--sender", "Shop", "--template-body", "<p>Hi</p>",
                    "--encoding", "auto"]),
    "mailing": (dict(channel="mailing", subject="Hi {name}", body="<p>From {city}</p>",
                     from_email="news@example.org"),
                lambda: sendframe.mailing("Hi {name}", "<p>From {city}</p>", from_email="news@example.org"),
                ["--subject", "Hi {name}", "--body", "<p>From {city}</p>", "--from-email", "news@example.org"]),
    "voice": (dict(channel="voice", message="Hola {name}", language="es_ES", gender="M"),
              lambda: sendframe.voice("Hola {name}", language="es_ES", gender="M"),
              ["--message", "Hola {name}", "--language", "es_ES", "--gender", "M"]),
    "voiceAudio": (dict(channel="voiceAudio", audio_url="https://example.org/a.mp3"),
                   lambda: sendframe.voice_audio("https://example.org/a.mp3"),
                   ["--audio-url", "https://example.org/a.mp3"]),
    "whatsapp": (dict(channel="whatsapp", template_id=1003, sender="34911111111", header_fields=("city",),
                      body_fields=("name", "city"), call_to_action_fields=("name",)),
                 lambda: sendframe.whatsapp(1003, "34911111111", header_fields=["city"], body_fields=["name", "city"],
                                            call_to_action_fields=["name"]),
                 ["--template-id", "1003", "--sender", "34911111111", "--header-fields", "city", "--body-fields",
                  "name,city", "--call-to-action-fields", "name"]),
}


CASES["whatsapp, body only"] = (
    dict(channel="whatsapp", template_id=1002, sender="34911111111", body_fields=("name",)),
    lambda: sendframe.whatsapp(1002, "34911111111", body_fields=["name"]),
    ["--template-id", "1002", "--sender", "34911111111", "--body-fields", "name"])


@pytest.mark.parametrize("case", list(CASES))
def test_the_form_makes_the_message_the_library_and_the_cli_make(case):
    form, library, flags = CASES[case]
    parser = argparse.ArgumentParser()
    add_arguments("send", parser)
    cli = message_from_args(parser.parse_args(["contacts.csv", "--channel", form["channel"], *flags]))
    assert message_from_form(form) == library() == cli


def test_every_channel_of_the_registry_has_its_inputs_each_with_a_label():
    assert set(CHANNEL_INPUTS) == set(CHANNELS)
    used = {name for names in CHANNEL_INPUTS.values() for name in names}
    assert used <= set(FORM_DEFAULTS) and used <= set(INPUT_LABELS)


@pytest.mark.parametrize(("form", "said"), [
    (dict(message="Hi"), "To send by sms, fill in From (the sender label"),
    (dict(channel="mailing", body="<p>x</p>"), "fill in Subject (the email subject, a template) and From email"),
    (dict(channel="voiceAudio"), "fill in Audio URL"),
    (dict(channel="whatsapp", sender="34911111111"), "fill in Template id (the approved template's id)"),
    (dict(channel="voice", message="  "), "fill in Spoken text (the text to speak)"),
])
def test_an_empty_input_a_channel_needs_is_named_as_the_analyst_sees_it(form, said):
    with pytest.raises(InputError, match=r"fill in") as info:
        message_from_form(form)
    assert said in str(info.value)


def test_a_wrong_value_is_refused_with_the_services_rule():
    with pytest.raises(InputError, match="gender must be F for language arb"):
        message_from_form(dict(channel="voice", message="Hi", language="arb", gender="M"))


def test_the_composers_own_settings_reach_the_message_only_where_the_channel_takes_them():
    sms = message_from_form(dict(message="Hi", sender="Shop", to="Mobile"),
                            notification_url="http://127.0.0.1:9/n")
    assert sms.notification_url == "http://127.0.0.1:9/n" and sms.to == "Mobile"
    voice = message_from_form(dict(channel="voice", message="Hi"), notification_url="http://127.0.0.1:9/n")
    assert voice.notification_url is None  # voice takes no notification address: not an error in the widget
    assert message_from_form(dict(channel="mailing", subject="S", body="B", from_email="a@b.co",
                                  reply_to=" ")).fields["replyTo"] == "a@b.co"


def test_a_preview_fills_only_the_empty_inputs_it_does_not_show():
    assert preview_message(dict(message="Hi {name}")).fields["from"] == "Preview"
    assert preview_message(dict(message="Hi", sender="Shop")).fields["from"] == "Shop"
    mail = preview_message(dict(channel="mailing", body="<p>Hi</p>"))
    assert mail.fields["subject"] == "(subject)" and mail.fields["fromEmail"] == "preview@example.com"


def test_unknown_form_names_are_refused_with_a_did_you_mean():
    with pytest.raises(UnknownOptionError, match="'subjet'.*'subject'"):
        checked_form({"subjet": "Hi"})
    assert checked_form({"channel": "voice_audio"})["channel"] == "voiceAudio"


def test_the_default_ledger_is_the_one_sendframe_send_uses(tmp_path):
    msg = message_from_form(CASES["sms"][0])
    assert message_ledger_path("spring list", msg).name.startswith("spring-")  # the campaign names it
    other = message_from_form(dict(message="Hi {name}!", sender="Shop", parts=2, encoding="gsm-pt",
                                   trans=True, campaign_name="spring"))
    assert message_ledger_path("x", other) != message_ledger_path("x", msg)  # a changed message starts a new ledger


# ---- the HTML the widgets show ---------------------------------------------------------------------

def test_errors_are_plain_english_without_credentials():
    error = ValueError("https://demo:s3cret@api.example.com refused s3cret")
    text = plain_error(error, secrets=["s3cret"])
    assert "s3cret" not in text and "https://***@api.example.com" in text
    assert "Traceback" not in text
    assert "<br>" in error_html("Not sent", InputError("line one\nline two"))


def test_the_confirmation_says_what_the_send_will_do_from_the_messages_estimate():
    contacts = pd.DataFrame({"phone": ["34600123456", "34600123456", "12"], "name": ["a", "b", "c"]})
    estimate = sendframe.sms("Hi {name}", sender="Shop").estimate(contacts)
    text = confirmation_html("sms", estimate, "spring-1234abcd.ledger.sqlite")
    assert "to <b>1</b> recipients" in text and "2 of 3 rows not sent" in text
    assert "spring-1234abcd.ledger.sqlite" in text


def test_the_end_of_a_send_says_counts_and_what_to_do_next():
    results = pd.DataFrame({"outcome": ["accepted", "not_sent", "skipped_duplicate"]})
    assert outcome_counts(results) == {"accepted": 1, "not_sent": 1, "skipped_duplicate": 1}
    text = result_html(results, 1, "x.sqlite", cancelled=True)
    assert "skipped: repeated recipient: <b>1</b>" in text
    assert "Cancelled: 1 sent in this run" in text and "press Send again" in text


# ---- the background send, without widgets ----------------------------------------------------------

def test_a_background_send_returns_at_once_and_keeps_its_result():
    release = threading.Event()
    job = BackgroundJob(lambda progress, cancel: release.wait(5) and "done").start()
    assert job.running and not job.wait(0.05)
    release.set()
    assert job.wait(5) and job.result == "done" and not job.running


def test_cancel_sets_the_event_the_send_watches():
    def send(progress, cancel):
        progress.reset(total=3)
        progress.update(1)
        cancel.wait(5)
        return cancel.is_set()

    job = BackgroundJob(send).start()
    job.cancel()
    assert job.wait(5) and job.result is True and job.cancelled and job.n == 1


def test_an_error_is_kept_for_the_caller_and_never_raised_from_the_thread(capfd):
    job = BackgroundJob(lambda progress, cancel: 1 / 0).start()
    assert job.wait(5)
    assert isinstance(job.error, ZeroDivisionError)
    assert "Traceback" not in capfd.readouterr().err


def test_warnings_of_the_send_thread_stay_on_the_job_and_others_still_show():
    def send(progress, cancel):
        warnings.warn("from the send", UserWarning, stacklevel=1)

    job = BackgroundJob(send).start()
    assert job.wait(5)
    assert [str(m.message) for m in job.warnings] == ["from the send"]
    with pytest.warns(UserWarning, match="from the main thread"):
        warnings.warn("from the main thread", UserWarning, stacklevel=1)


def test_the_job_is_a_progress_that_speaks_tqdms_language():
    seen = []
    job = BackgroundJob(lambda progress, cancel: None, on_progress=lambda n, total: seen.append((n, total)))
    job.reset(total=4)
    job.update(3)
    job.close()
    assert seen == [(0, 4), (3, 4)]
