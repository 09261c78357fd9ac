"""One vocabulary: every option of every channel, by the same name and default, in each front door.

The options come from the one table (:func:`sendframe.campaign.channel_options.channel_options`);
for each one this proves the library's constructor and ``message()``, the one-call function, the
flags of ``sendframe send`` and the Composer take it, and build the same message from it. What a
door leaves out is listed here with the reason.
"""

from __future__ import annotations

import argparse
import inspect
import json
import threading

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.channel_options import OptionSpec, channel_options, split_options
from sendframe.campaign.command import NOT_FLAGS, add_arguments, flag, message_from_args, options_from_args
from sendframe.campaign.message import CONSTRUCTORS, Message, message
from sendframe.channels import CHANNELS
from sendframe.errors import UnknownOptionError
from sendframe.notebook.composer import Composer
from sendframe.notebook.form import NOT_COMPOSER_OPTIONS

CONTACTS = pd.DataFrame({"phone": ["34600123456", "34600123457"], "email": ["ana@example.org", "bo@example.org"],
                         "name": ["Ana", "Bo"], "mobile": ["34600123456", "34600123457"]})
ONE_CALL = {"sms": sendframe.send_sms, "landingsms": sendframe.send_landingsms, "mailing": sendframe.send_mailing,
            "voice": sendframe.send_voice, "voiceAudio": sendframe.send_voice_audio,
            "whatsapp": sendframe.send_whatsapp}
# what each channel cannot go without (mailing's body too: the Composer asks for it)
REQUIRED = {
    "sms": {"message": "Hi {name}", "sender": "Shop"},
    "landingsms": {"message": "Hi {name}: {LAND_URL}", "sender": "Shop"},
    "mailing": {"subject": "Hi {name}", "body": "<p>Hi</p>", "from_email": "news@example.org"},
    "voice": {"message": "Hi {name}", "language": "en_GB", "gender": "F"},
    "voiceAudio": {"audio_url": "https://example.org/a.mp3"},
    "whatsapp": {"template_id": 1002, "sender": "34911111111"},
}
# a value of each option other than its default (one a command line can spell, where it has a flag)
SAMPLES = {
    "message": "Hola {name}", "sender": "Tienda", "subject": "Hola", "body": "<p>Hola</p>",
    "from_email": "hola@example.org", "reply_to": "r@example.org", "language": "es_ES", "gender": "M",
    "audio_url": "https://example.org/b.mp3", "template_id": 1003, "template_body": "<p>Hola {name}</p>",
    "encoding": "gsm-pt", "to": "mobile", "notification_url": "https://hooks.example.org/n",
    "link_base": "https://l.example.org", "default_region": "PT", "campaign_name": "spring",
    "suppression": "suppression.csv", "frequency_cap": (2, 7), "history": "ledgers", "local_time": "10:00",
    "quiet_hours": ("09:00", "21:00"), "schedule_date": "20300101100000", "expiration_date": "20300102100000",
    "tags": ["a", "b"], "trans": 1, "certified": True, "split_parts": True, "flash": True, "parts": 2,
    "available_times": [{"from": "09:00", "to": "18:00"}], "otp_config": {"length": 6}, "cc": ["c@example.org"],
    "bcc": ["b@example.org"], "from_name": "Shop", "template_v2_id": 7, "track_opens": False,
    "track_clicks": False, "attachments": [{"name": "a.txt", "content": "aGk=", "contentType": "text/plain"}],
    "callers": {"ES": "34911111111"}, "retries": 2, "amd": True, "header_fields": ["name"],
    "body_fields": ["name"], "call_to_action_fields": ["name"], "default_answer": ["name"],
    "client": None, "ledger": "spring.sqlite", "keep": ["invalid"], "batch_size": 2, "concurrency": 1,
    "requests_per_second": 5.0, "parts_per_second": 5.0, "dry_run": True, "resend_unknown": True,
    "stop_after_unknown": 1, "progress": False, "max_cost": 10.0, "prices": "prices.csv",
    "callbacks": "callbacks.log", "now": "2026-11-24T12:00:00+00:00", "out": "results", "cancel": threading.Event(),
}
# what message() needs besides, where the constructor has a default (reply_to: from_email; landing_sms: a page)
MESSAGE_NEEDS = {"mailing": {"reply_to": "news@example.org"}, "landingsms": {"template_body": "<p>Hi</p>"}}
# options that need another to be given with them
WITH = {"frequency_cap": {"history": "ledgers"}, "tags": {"campaign_name": "spring"}}
# options a door does not take, and why (the doors' own lists must say the same)
NOT_CLI_FLAGS = {
    "client": "credentials come from the environment, never from a flag",
    "cancel": "Ctrl-C stops a command",
    "now": "a command runs now",
    "out": "the command's --out writes the result as CSV (a Parquet folder is the library's)",
}
NOT_IN_COMPOSER = {
    "progress": "the Composer shows its own progress bar",
    "cancel": "the Composer's Cancel button",
    "out": "the result lands in composer.results",
}

OPTIONS = [(name, option) for name in CHANNELS for option in channel_options(name)]
IDS = [f"{name}-{option.name}" for name, option in OPTIONS]


def given(option: OptionSpec) -> dict:
    return {option.name: SAMPLES[option.name], **WITH.get(option.name, {})}


def test_the_exclusions_are_the_doors_own():
    assert set(NOT_CLI_FLAGS) == set(NOT_FLAGS)
    assert set(NOT_IN_COMPOSER) == set(NOT_COMPOSER_OPTIONS)


def test_every_option_has_a_sample_and_every_sample_an_option():
    assert {option.name for _, option in OPTIONS} == set(SAMPLES)


@pytest.mark.parametrize(("name", "option"), OPTIONS, ids=IDS)
def test_the_library_takes_the_option(name, option):
    constructor = CONSTRUCTORS[name]
    parameters = inspect.signature(constructor).parameters
    if option.name in parameters:
        assert parameters[option.name].default in (option.default, inspect.Parameter.empty)
    if option.role == "send":
        assert inspect.signature(Message.send).parameters[option.name].default == option.default
        return
    changed = constructor(**{**REQUIRED[name], **given(option)})
    assert changed != constructor(**REQUIRED[name])  # taken, not ignored
    assert isinstance(message(name, **{**REQUIRED[name], **MESSAGE_NEEDS.get(name, {}), **given(option)}), Message)


@pytest.mark.parametrize(("name", "option"), OPTIONS, ids=IDS)
def test_the_one_call_function_takes_the_option_by_the_same_name_and_default(name, option):
    parameter = inspect.signature(ONE_CALL[name]).parameters[option.name]
    assert parameter.default == (inspect.Parameter.empty if option.required else option.default)
    message_options, send_options = split_options(name, given(option), f"sendframe.{ONE_CALL[name].__name__}")
    assert (option.name in send_options) == (option.role == "send")
    assert (option.name in message_options) == (option.role != "send")


@pytest.mark.parametrize("name", CHANNELS)
def test_the_one_call_function_takes_the_constructors_arguments_in_its_order(name):
    constructor, one_call = CONSTRUCTORS[name], ONE_CALL[name]
    own = [(p.name, p.kind, p.default) for p in inspect.signature(constructor).parameters.values()
           if p.kind is not p.VAR_KEYWORD]
    assert [(p.name, p.kind, p.default) for p in inspect.signature(one_call).parameters.values()][1:len(own) + 1] == own
    positional = [REQUIRED[name][p] for p, kind, _ in own if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                  and p in REQUIRED[name]]
    keywords = {k: v for k, v in REQUIRED[name].items() if k not in [p for p, *_ in own][:len(positional)]}
    if name == "whatsapp":
        keywords["body_fields"] = ["name"]  # template 1002 fills its body from a column
    sent = one_call(CONTACTS, *positional, **keywords, dry_run=True, progress=False)
    by_hand = constructor(*positional, **keywords).send(CONTACTS, dry_run=True, progress=False)
    pd.testing.assert_frame_equal(sent, by_hand)
    assert set(sent["outcome"]) == {"dry_run"}


def test_an_unknown_option_of_a_one_call_function_says_which_was_meant():
    with pytest.raises(UnknownOptionError, match=r"sendframe.send_voice\(\) got an unknown option 'retrys'. "
                                                 r"Did you mean 'retries'\?"):
        sendframe.send_voice(CONTACTS, "Hi", language="en_GB", gender="F", retrys=2)


def test_send_landingsms_builds_the_default_landing_page_as_landing_sms_does():
    result = sendframe.send_landingsms(CONTACTS, "See {LAND_URL}", "Shop", dry_run=True, progress=False)
    assert result["outcome"].tolist() == ["dry_run", "dry_run"]
    assert sendframe.landing_sms("See {LAND_URL}", sender="Shop").fields["templateBody"] == "<p>See</p>"


def test_send_landingsms_reaches_the_sandbox_with_the_default_page(client):
    result = sendframe.send_landingsms(CONTACTS, "See {LAND_URL}", "Shop", client=client, progress=False)
    assert result["outcome"].tolist() == ["accepted", "accepted"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_arguments("send", parser)
    return parser


def _tokens(option: OptionSpec, value: object) -> list[str]:
    name = flag(option.name)
    if option.value == "bool":
        return [name if value else f"--no-{name[2:]}"]
    if option.name == "keep":
        return [token for reason in value for token in (name, reason)]  # type: ignore[attr-defined]
    if option.value == "list":
        return [name, ",".join(value)]  # type: ignore[arg-type]
    if option.value == "pair":
        return [name, *map(str, value)]  # type: ignore[call-overload]
    if option.value == "structure":
        return [name, json.dumps(value)]
    return [name, str(value)]


def _command_line(name: str, values: dict) -> list[str]:
    specs = {option.name: option for option in channel_options(name)}
    return ["contacts.csv", "--channel", name, *(t for k, v in values.items() for t in _tokens(specs[k], v))]


@pytest.mark.parametrize(("name", "option"), OPTIONS, ids=IDS)
def test_the_cli_has_a_flag_spelled_from_the_option(name, option):
    parser = _parser()
    if option.name in NOT_CLI_FLAGS:
        line = _command_line(name, REQUIRED[name]) + (["--out", "results.csv"] if option.name == "out" else [])
        assert option.name not in options_from_args(parser.parse_args(line))[1]  # --out is the command's own
        assert flag(option.name) not in parser._option_string_actions or option.name == "out"
        return
    assert parser.get_default(option.name) is None  # not given: the library's default holds
    args = parser.parse_args(_command_line(name, {**REQUIRED[name], **given(option)}))
    message_options, send_options = options_from_args(args)
    if option.role == "send":
        assert send_options == {option.name: SAMPLES[option.name]}
        return
    assert message_options[option.name] == SAMPLES[option.name] or option.value == "pair"
    assert message_from_args(args) == CONSTRUCTORS[name](**{**REQUIRED[name], **given(option)})


@pytest.mark.parametrize("name", CHANNELS)
def test_a_command_line_without_an_option_builds_the_librarys_default_message(name):
    args = _parser().parse_args(_command_line(name, REQUIRED[name]))
    assert message_from_args(args) == CONSTRUCTORS[name](**REQUIRED[name])
    assert options_from_args(args)[1] == {}


def test_a_flag_of_another_channel_is_refused_naming_the_channels_it_applies_to():
    args = _parser().parse_args([*_command_line("voice", REQUIRED["voice"]), "--parts", "2"])
    with pytest.raises(sendframe.InputError, match="--parts does not apply to --channel voice: it applies to sms, "
                                                   "landingsms"):
        message_from_args(args)


@pytest.mark.parametrize(("name", "option"), OPTIONS, ids=IDS)
def test_the_composer_takes_the_option(name, option):
    if option.name in NOT_IN_COMPOSER:
        with pytest.raises(UnknownOptionError, match=option.name):
            Composer(CONTACTS, channel=name, **{**REQUIRED[name], **given(option)})
        return
    composer = Composer(CONTACTS, channel=name, **{**REQUIRED[name], **given(option)})
    if option.role == "send":
        assert composer.send_options == {option.name: SAMPLES[option.name]}
        return
    expected = CONSTRUCTORS[name](**{**REQUIRED[name], **given(option)})
    assert composer.message == expected


@pytest.mark.parametrize("name", CHANNELS)
def test_a_composer_given_only_what_it_needs_builds_the_librarys_default_message(name):
    composer = Composer(CONTACTS, channel=name, **REQUIRED[name])
    assert composer.message == CONSTRUCTORS[name](**REQUIRED[name])  # every input starts on the library's default
    assert composer.send_options == {}


def test_the_composer_names_an_unknown_option_once():
    composer = Composer(CONTACTS, **REQUIRED["sms"])
    with pytest.raises(UnknownOptionError, match=r"^Composer.set\(\) got an unknown option 'mesage'. "
                                                 r"Did you mean 'message'\?$"):
        composer.set(mesage="Hi")
    with pytest.raises(UnknownOptionError, match=r"^Composer\(\) got an unknown option 'templat_body'. "
                                                 r"Did you mean 'template_body'\?$"):
        Composer(CONTACTS, templat_body="<p>x</p>")
