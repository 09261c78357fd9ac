"""One Message, written once, applied to a contact table: the same settings everywhere, checked options."""

from __future__ import annotations

import warnings
from datetime import datetime

import pandas as pd
import pyarrow as pa
import pytest

import sendframe
from sendframe.campaign.preflight import preflight
from sendframe.campaign.prepared import estimate
from sendframe.campaign.preview import render
from sendframe.errors import InputError, RequestValidationError, RowsSkippedWarning, UnknownOptionError

ES, PT, UK = "34600123456", "351912345678", "447700900001"


@pytest.fixture
def contacts():
    return pd.DataFrame({
        "Mobile": [ES, ES, "12", PT, UK, "34600123457"],
        "name": ["ana", "bo", "cy", "joão", "ed", None],
    }, index=pd.Index([10, 11, 12, 13, 14, 15], name="contact_id"))


def test_one_message_finds_a_mobile_column_and_applies_its_settings_to_every_method(contacts):
    msg = sendframe.sms("Olá {name|capitalize}", sender="Shop", parts=2, encoding="auto")
    assert msg.recipient_column(contacts) == "Mobile"
    assert msg.render(contacts).tolist()[:2] == ["Olá Ana", "Olá Bo"]
    plan = msg.plan(contacts)
    assert plan["action"].tolist() == ["send", "skipped_duplicate", "skipped_invalid", "send", "send",
                                       "skipped_preflight"]
    assert msg.ready(contacts).index.tolist() == [10, 13, 14]
    est = msg.estimate(contacts)
    assert est["encoding"].tolist()[0] == "gsm-pt"  # á is in the Portuguese shift table, not in gsm
    assert est.loc[est["action"] != "send", "cost"].eq(0).all()
    assert est.attrs["totals"]["billable"] == 3
    problems = msg.preflight(contacts)
    assert {"invalid_recipient", "duplicate_recipient", "missing_variable"} <= set(problems["rule"])


def test_the_input_frame_is_never_modified(contacts):
    before = contacts.copy()
    msg = sendframe.sms("Hi {name}", sender="Shop")
    msg.preview(contacts), msg.estimate(contacts), msg.plan(contacts), msg.ready(contacts)
    msg.send(contacts, dry_run=True, progress=False)
    pd.testing.assert_frame_equal(contacts, before)


@pytest.mark.parametrize(("make", "wrong", "meant"), [
    (lambda **kw: sendframe.sms("Hi", sender="Shop", **kw), "encodng", "encoding"),
    (lambda **kw: sendframe.sms("Hi", sender="Shop", **kw), "notification_ur", "notification_url"),
    (lambda **kw: sendframe.mailing("Hi", "<p>x</p>", from_email="a@b.co", **kw), "replyto", "reply_to"),
    (lambda **kw: sendframe.send_sms(pd.DataFrame({"phone": [ES]}), "Hi", "Shop", **kw), "batchsize", "batch_size"),
    (lambda **kw: preflight(sendframe.sms("Hi", sender="Shop"), pd.DataFrame({"phone": [ES]}), **kw), "suppresion",
     "suppression"),
    (lambda **kw: estimate(sendframe.sms("Hi", sender="Shop"), pd.DataFrame({"phone": [ES]}), **kw), "price", "prices"),
    (lambda **kw: render(pd.DataFrame({"phone": [ES]}), "Hi", **kw), "link_bas", "link_base"),
    # one name per request field, the spec's in snake_case: no second spelling
    (lambda **kw: sendframe.sms("Hi", sender="Shop", **kw), "campaign", "campaign_name"),
    (lambda **kw: sendframe.whatsapp(1002, "34911111111", **kw), "action_fields", "call_to_action_fields"),
])
def test_an_unknown_option_is_an_error_naming_the_closest_known_one(make, wrong, meant):
    with pytest.raises(UnknownOptionError, match=f"'{wrong}'.*Did you mean '{meant}'"):
        make(**{wrong: 1})


def test_an_option_no_channel_field_has_is_refused_before_anything_is_sent(contacts):
    with pytest.raises(UnknownOptionError, match="local_time"):
        sendframe.send_sms(contacts, "Hi", "Shop", local_tim="10:00", dry_run=True)
    with pytest.raises(TypeError):  # an UnknownOptionError is a TypeError, as Python's own is
        sendframe.sms("Hi", sender="Shop").send(contacts, max_parts=2)


def test_request_fields_are_taken_in_snake_case_or_camel_case_and_validated_when_the_message_is_made():
    a = sendframe.sms("Hi", sender="Shop", campaign_name="Spring", split_parts=True)
    b = sendframe.sms("Hi", sender="Shop", campaignName="Spring", splitParts=True)
    assert a.fields == b.fields == {"message": "Hi", "from": "Shop", "campaignName": "Spring", "splitParts": True}
    with pytest.raises(RequestValidationError, match="from"):
        sendframe.sms("Hi", sender="A sender label far too long")
    with pytest.raises(RequestValidationError, match="parts"):
        sendframe.sms("Hi", sender="Shop", parts=99)
    with pytest.raises(InputError, match="encoding"):
        sendframe.sms("Hi", sender="Shop", encoding="latin-1")


def test_a_placeholder_with_a_space_is_a_preflight_error_and_never_sent_as_written():
    frame = pd.DataFrame({"phone": [ES], "First Name": ["Ana"]})
    msg = sendframe.sms("Hi {First Name}", sender="Shop")
    problems = msg.preflight(frame)
    assert problems["rule"].tolist() == ["malformed_placeholder"]
    assert "{first_name}" in problems["message"].iloc[0]
    with pytest.raises(InputError, match=r"\{First Name\}"):
        msg.send(frame, dry_run=True, progress=False)


def test_an_unknown_filter_is_a_preflight_error_not_an_exception():
    problems = sendframe.sms("Hi {name|shout}", sender="Shop").preflight(pd.DataFrame({"phone": [ES], "name": ["a"]}))
    assert problems["rule"].tolist() == ["invalid_template"]
    assert "shout" in problems["message"].iloc[0]


def test_skipped_rows_are_said_once_and_kept_with_their_outcome(contacts):
    msg = sendframe.sms("Hi {name}", sender="Shop")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = msg.send(contacts, dry_run=True, progress=False, suppression=[PT])
    said = [w for w in caught if issubclass(w.category, RowsSkippedWarning)]
    assert len(said) == 1
    assert "4 of 6 rows not to be sent" in str(said[0].message)
    assert result["outcome"].astype(str).tolist() == ["dry_run", "skipped_duplicate", "skipped_invalid",
                                                      "skipped_suppressed", "dry_run", "skipped_preflight"]
    assert result.loc[13, "reason"].endswith("do not send to it.")
    assert result["recipient"].tolist()[:2] == [ES, ES] and result.loc[10, "text"] == "Hi ana"
    assert not result.loc[12, "accepted"]


def test_keep_sends_what_the_policy_would_skip(contacts):
    msg = sendframe.sms("Hi", sender="Shop")
    result = msg.send(contacts, dry_run=True, progress=False, keep=["duplicate", "invalid"])
    assert (result["outcome"] == "dry_run").all()
    with pytest.raises(InputError, match="Did you mean 'duplicate'"):
        msg.plan(contacts, keep="duplicates")


def test_a_repeat_whose_first_row_is_skipped_still_gets_the_message_once():
    frame = pd.DataFrame({"phone": [ES, ES, ES], "name": [None, "Bo", "Cy"]})
    plan = sendframe.sms("Hi {name}", sender="Shop").plan(frame)
    assert plan["action"].tolist() == ["skipped_preflight", "send", "skipped_duplicate"]


def test_a_table_that_exports_arrow_is_taken_as_it_is():
    table = pa.table({"phone": [ES, PT], "name": ["Ana", "Rui"]})
    assert sendframe.sms("Hi {name}", sender="Shop").render(table).tolist() == ["Hi Ana", "Hi Rui"]
    with pytest.raises(InputError, match="not list"):
        sendframe.sms("Hi", sender="Shop").render([ES])


def test_repr_shows_the_settings_but_not_a_notification_urls_token():
    msg = sendframe.sms("Hi", sender="Shop", notification_url="http://127.0.0.1:9/cb?token=s3cret&id=%i")
    assert "s3cret" not in repr(msg) and "Shop" in repr(msg) and "127.0.0.1:9/cb" in repr(msg)


def test_replace_gives_a_new_message_and_leaves_the_old_one_alone():
    base = sendframe.sms("Hi", sender="Shop", encoding="auto")
    other = base.replace(message="Hello", parts=2)
    assert (base.fields["message"], base.parts) == ("Hi", 1)
    assert (other.fields["message"], other.parts, other.encoding) == ("Hello", 2, "auto")
    with pytest.raises(AttributeError):
        base.channel = "mailing"  # type: ignore[misc]


def test_every_channel_has_a_constructor_and_the_generic_one_takes_any_spelling():
    email = sendframe.message("email", subject="Hi", body="<p>x</p>", from_email="a@b.co", reply_to="a@b.co")
    assert email.channel == "mailing"
    voice = sendframe.voice("Hi", language="en_GB", gender="F")
    assert voice.recipient_column(pd.DataFrame({"Teléfono": [ES]})) == "Teléfono"
    assert sendframe.voice_audio("https://example.org/a.mp3").channel == "voiceAudio"
    assert sendframe.landing_sms("See {LAND_URL}", "Shop").fields["templateBody"] == "<p>See</p>"
    assert sendframe.whatsapp(1002, "34911111111", body_fields="name").whatsapp_columns["bodyFields"] == ("name",)
    with pytest.raises(InputError, match="encoding applies to sms and landingsms"):
        sendframe.voice("Hi", language="en_GB", gender="F", encoding="auto")


def test_auto_encoding_sends_each_row_in_the_encoding_estimate_priced(sb, client):
    frame = pd.DataFrame({"phone": ["447700900011", "447700900012", "447700900013"],
                          "name": ["Ana", "João", "Zoë 😀"]})
    msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto")
    est = msg.estimate(frame)
    assert est["encoding"].tolist() == ["gsm", "gsm-pt", "utf-16"]
    result = msg.send(frame, client=client, progress=False)
    assert result["outcome"].astype(str).tolist() == ["accepted"] * 3
    stored = sb.messages().set_index("id").loc[result["id"]]
    assert [extra["encoding"] for extra in stored["extra"]] == est["encoding"].tolist()
    assert stored["message"].tolist() == result["text"].tolist()  # nothing arrived as '?'
    assert result["batch"].nunique() == 3  # one request per encoding


def test_the_budget_cap_is_never_exceeded_and_a_higher_cap_continues_from_the_ledger(sb, client, tmp_path):
    frame = pd.DataFrame({"phone": [f"3460012{n:04d}" for n in range(10)], "name": ["Ana"] * 10})
    msg = sendframe.sms("Hi {name}", sender="Shop")
    unit = msg.estimate(frame)["cost"].iloc[0]
    ledger = tmp_path / "budget.sqlite"
    with pytest.warns(RowsSkippedWarning, match="max_cost"):
        first = msg.send(frame, client=client, ledger=ledger, batch_size=2, concurrency=1, progress=False,
                         max_cost=unit * 5)  # room for two batches of two, not a third
    assert first["outcome"].astype(str).value_counts().to_dict() == {"accepted": 4, "not_sent": 6}
    assert first.loc[first["outcome"] == "not_sent", "reason"].str.contains("max_cost=").all()
    def stored():
        messages = sb.messages()
        return messages[messages["recipient"].isin(frame["phone"])]

    assert len(stored()) == 4
    second = msg.send(frame, client=client, ledger=ledger, batch_size=2, progress=False, max_cost=unit * 8)
    assert second["outcome"].astype(str).value_counts().to_dict() == {"accepted": 8, "not_sent": 2}
    assert len(stored()) == 8 and not stored()["recipient"].duplicated().any()
    assert stored()["cost"].sum() <= unit * 8 + 1e-9


def test_local_time_schedules_each_row_at_ten_on_its_own_clock_and_the_result_says_when(sb, client):
    frame = pd.DataFrame({"phone": ["447700900021", "447700900022", "34600123999"],
                          "timezone": ["Asia/Tokyo", "America/New_York", None], "name": ["a", "b", "c"]})
    now = pd.Timestamp("2027-03-27T12:00:00+00:00")  # New York is already on summer time, Madrid not yet
    msg = sendframe.sms("Hi {name}", sender="Shop", local_time="10:00")
    planned = msg.schedule(frame, now=now)
    assert planned["timezone"].tolist() == ["Asia/Tokyo", "America/New_York", "Europe/Madrid"]
    assert [str(t) for t in planned["send_at_utc"]] == [
        "2027-03-28 01:00:00+00:00", "2027-03-27 14:00:00+00:00", "2027-03-28 08:00:00+00:00"]  # Madrid: DST that day
    result = msg.send(frame, client=client, now=now, progress=False)
    assert (result["scheduled_at"] == planned["send_at_utc"]).all()
    assert result["batch"].nunique() == 3  # one request per send time, each with its scheduleDate
    with pytest.raises(InputError, match="zone"):
        msg.schedule(frame, now="2027-03-27 12:00")  # a naive time is refused


def test_a_frequency_cap_skips_recipients_an_earlier_campaign_already_reached(sb, client, tmp_path):
    frame = pd.DataFrame({"phone": ["34600123001", "34600123002", "34600123003"], "name": ["a", "b", "c"]})
    folder = tmp_path / "ledgers"
    folder.mkdir()
    sendframe.sms("First {name}", sender="Shop").send(frame.iloc[:2], client=client, ledger=folder / "one.sqlite",
                                                      progress=False)
    capped = sendframe.sms("Second {name}", sender="Shop", frequency_cap=(1, 7), history=folder)
    with pytest.warns(RowsSkippedWarning, match="frequency"):
        result = capped.send(frame, client=client, ledger=folder / "two.sqlite", progress=False)
    assert result["outcome"].astype(str).tolist() == ["skipped_frequency", "skipped_frequency", "accepted"]
    again = capped.send(frame, client=client, ledger=folder / "two.sqlite", progress=False)  # its own ledger
    assert again["outcome"].astype(str).tolist() == ["skipped_frequency", "skipped_frequency", "accepted"]
    with pytest.raises(InputError, match="history"):
        sendframe.sms("Hi", sender="Shop", frequency_cap=(1, 7))


def test_values_put_into_html_are_escaped_in_the_preview_as_the_service_escapes_them():
    frame = pd.DataFrame({"email": ["a@example.com"], "phone": [ES], "name": ["<script>x()</script>"]})
    mail = sendframe.mailing("Hi {name}", "<p>Hi {name}</p>", from_email="news@example.org")
    assert mail.render(frame).tolist() == ["Hi &lt;script&gt;x()&lt;/script&gt;"]
    assert mail.render(frame, field="body").tolist() == ["<p>Hi &lt;script&gt;x()&lt;/script&gt;</p>"]
    page = sendframe.landing_sms("See {LAND_URL}", "Shop", template_body="<h1>{name}</h1>")
    assert page.render(frame, field="template_body").tolist() == ["<h1>&lt;script&gt;x()&lt;/script&gt;</h1>"]
    assert sendframe.sms("Hi {name}", sender="Shop").render(frame).tolist() == ["Hi <script>x()</script>"]  # not HTML


def test_a_date_without_a_time_zone_is_refused_with_a_hint_to_give_one():
    with pytest.raises(InputError, match="schedule_date=.*no time zone"):
        sendframe.sms("Hi", sender="Shop", schedule_date=datetime(2027, 1, 5, 10, 0))
    with pytest.raises(InputError, match="expiration_date=.*no time zone"):  # a bare date: midnight of which zone?
        sendframe.sms("Hi", sender="Shop", expiration_date=datetime(2027, 1, 5).date())
    with pytest.raises(InputError, match="zone"):
        sendframe.sms("Hi", sender="Shop", local_time="10:00").schedule(pd.DataFrame({"phone": [ES]}),
                                                                        now=datetime(2027, 1, 5, 10, 0))
    aware = sendframe.sms("Hi", sender="Shop", schedule_date=pd.Timestamp("2027-01-05 10:00", tz="Europe/Madrid"))
    assert aware.fields["scheduleDate"].tzinfo is not None


@pytest.fixture
def messy():
    """Phones as typed (junk, repeats, missing), names that force gsm-pt or utf-16, too long or missing."""
    phones = [ES, "34600123457", "12", None, ES, PT, UK, "34600123458", "34600123459", "34600123460"] * 30
    names = ["ana", "joão", "Zoë 😀", None, "ñandú", "x" * 300, "bo", "çé", "ed", "Ωmega"] * 30
    amounts = [f"{i}.5" if i % 7 else "n/a" for i in range(len(phones))]
    return pd.DataFrame({"phone": phones, "name": names, "amount": amounts},
                        index=pd.RangeIndex(100, 100 + len(phones)))


@pytest.mark.parametrize("encoding", ["auto", "gsm-pt", None])
def test_estimate_is_the_engines_estimate_of_every_row_priced_by_the_plan(messy, encoding):
    options = {} if encoding is None else {"encoding": encoding}
    msg = sendframe.sms("Hola {name|capitalize}, {amount|formatDotComma} EUR {UNSUB_URL}", sender="Shop", parts=2,
                        link_base="https://sndf.io", **options)
    est = msg.estimate(messy)
    engine = estimate(msg, messy)  # the engine on its own: no measurement or keys handed over
    plan = msg.plan(messy)
    sent = (plan["action"] == "send").to_numpy()
    # msg.estimate holds its few-valued columns as categoricals and its counts narrower: the engine's values
    assert all(isinstance(est[c].dtype, pd.CategoricalDtype) for c in ("encoding", "action"))
    assert est["country"].dtype == engine["country"].dtype  # text: an analyst's fillna("?") keeps working
    assert (str(est["length"].dtype), str(est["parts"].dtype)) == ("Int32", "Int16")
    shown = est.drop(columns=["billable", "cost", "action"])
    pd.testing.assert_frame_equal(shown, engine.drop(columns=["billable", "cost"]).astype(shown.dtypes.to_dict()))
    assert (est["billable"].to_numpy() == (engine["billable"].to_numpy() & sent)).all()
    assert est["cost"].tolist() == engine["cost"].where(sent, 0.0).tolist()
    pd.testing.assert_series_equal(est["action"].astype("str"), plan["action"])
    problems = msg.preflight(messy)  # what plan reads: the same problems whether the text was measured for it or not
    assert set(problems["rule"]) >= {"invalid_recipient", "too_many_parts", "missing_variable"}


@pytest.mark.parametrize("encoding", ["auto", "gsm"])
def test_a_send_result_shows_each_row_the_text_render_gives_and_the_plans_outcome(messy, encoding):
    msg = sendframe.sms("Hola {name|capitalize}, {amount|formatDotComma} EUR {UNSUB_URL}", sender="Shop", parts=2,
                        encoding=encoding, link_base="https://sndf.io")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RowsSkippedWarning)
        result = msg.send(messy, dry_run=True, progress=False)
    pd.testing.assert_series_equal(result["text"], msg.render(messy), check_names=False)
    plan = msg.plan(messy)
    skipped = plan["action"] != "send"
    assert result["outcome"].astype(str)[skipped].tolist() == plan["action"][skipped].tolist()
    assert (result["outcome"].astype(str)[~skipped] == "dry_run").all()
    preview = msg.preview(messy)
    pd.testing.assert_series_equal(preview["text"], result["text"])


def test_message_and_the_channel_constructors_fill_in_the_same_defaults():
    # a mailing's reply-to and a landing SMS's default page are filled in by message() itself, so every front door
    # (constructors, one-call functions, CLI, Composer) gets them
    assert (sendframe.message("mailing", subject="Hi", body="<p>x</p>", from_email="a@b.co")
            == sendframe.mailing("Hi", "<p>x</p>", from_email="a@b.co"))
    assert sendframe.mailing("Hi", "<p>x</p>", from_email="a@b.co").fields["replyTo"] == "a@b.co"
    page = sendframe.message("landingsms", message="Sale {name}! {LAND_URL}", sender="Shop")
    assert page == sendframe.landing_sms("Sale {name}! {LAND_URL}", "Shop")
    assert page.fields["templateBody"] == "<p>Sale {name}!</p>"
    assert "templateBody" not in sendframe.message("landingsms", message="See {LAND_URL}", sender="Shop",
                                                   template_id=3).fields
