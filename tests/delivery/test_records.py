"""fetch_records and read_lookup_answers: lookup answers read into typed frames (columns, order, odd values)."""

from __future__ import annotations

import gc
import json

import httpx
import pandas as pd
import pytest

from sendframe.api.client import AsyncClient, Client
from sendframe.delivery.records import EVENT_COLUMNS, MESSAGE_COLUMNS, fetch_records, read_lookup_answers
from sendframe.errors import ApiError, InputError
from tests.conftest import FAST_RETRY

MESSAGE_DTYPES = {"id": "string", "sender": "category", "recipient": "string", "message": "string",
                  "campaign_id": "Int64",
                  "sending_id": "Int64", "is_delivered": "boolean", "is_clicked": "boolean"}
EVENT_DTYPES = {"id": "string", "type": "category", "date": "datetime64[us, UTC]", "is_mobile": "boolean",
                "browser": "category", "os": "category"}


def record(message_id: str, *, events: list[dict] | None = None, custom: dict | None = None, **fields: object) -> dict:
    """One record in its wire form."""
    wire = {"id": message_id, "from": "Shop", "to": "447700900001", "message": "Hi", "campaignId": 7, "sendingId": 9,
            "isDelivered": False, "isClicked": False,
            "events": [{"type": "sent", "date": "2026-11-21T09:30:04+00:00", "isMobile": False, "browser": "",
                        "os": ""}]
            if events is None else events,
            "customFields": custom or {}, "links": {"self": f"http://127.0.0.1:1/api/rest/sms/{message_id}"}}
    return wire | fields


def answer(*records: dict, indent: int | None = None) -> bytes:
    return json.dumps({"data": list(records)}, ensure_ascii=False, indent=indent).encode("utf-8")


def assert_typed(records) -> None:
    assert {name: str(records.messages[name].dtype) for name in MESSAGE_COLUMNS} == MESSAGE_DTYPES
    assert list(records.events.columns) == list(EVENT_COLUMNS)
    assert {name: str(dtype) for name, dtype in records.events.dtypes.items()} == EVENT_DTYPES


def test_answers_become_typed_frames_in_request_order_with_unknown_ids_listed():
    first = answer(record("a1", isDelivered=True, campaignId=1), record("c3"))
    second = answer(record("d4", events=[
        {"type": "sent", "date": "2026-11-21T09:30:04+00:00", "isMobile": False, "browser": "", "os": ""},
        {"type": "clicked", "date": "2026-11-21T11:30:04+02:00", "isMobile": True, "browser": "Firefox",
         "os": "Android"},
    ]))
    records = read_lookup_answers([(["a1", "b2", "c3"], first), (["x9"], None), (["d4"], second)])
    assert_typed(records)
    assert records.messages["id"].tolist() == ["a1", "c3", "d4"]
    assert records.messages["is_delivered"].tolist() == [True, False, False]
    assert records.messages["campaign_id"].tolist() == [1, 7, 7]
    assert records.unknown_ids == ["b2", "x9"]
    events = records.events
    assert events["id"].tolist() == ["a1", "c3", "d4", "d4"]
    assert events["type"].tolist() == ["sent", "sent", "sent", "clicked"]
    assert events["date"].iloc[3] == pd.Timestamp("2026-11-21T09:30:04", tz="UTC")  # the +02:00 offset read as UTC
    assert events["is_mobile"].tolist() == [False, False, False, True]
    assert events["browser"].iloc[3] == "Firefox" and events["os"].iloc[3] == "Android"


def test_records_out_of_order_repeated_or_not_asked_for_are_put_in_request_order():
    body = answer(record("c3", message="third"), record("zz"), record("a1", message="first"),
                  record("c3", message="again"))
    records = read_lookup_answers([(["a1", "b2", "c3"], body)])
    assert records.messages["id"].tolist() == ["a1", "c3"]
    assert records.messages["message"].tolist() == ["first", "third"]  # the first record of a repeated id is kept
    assert records.events["id"].tolist() == ["a1", "c3"]  # events follow their records
    assert records.unknown_ids == ["b2"]


def test_records_without_events_give_no_event_rows_and_typed_empty_frames():
    records = read_lookup_answers([(["a1", "b2"], answer(record("a1", events=[]), record("b2", events=[])))])
    assert len(records.messages) == 2 and records.events.empty
    assert_typed(records)
    nothing = read_lookup_answers([(["a1"], None)])
    assert nothing.messages.empty and nothing.unknown_ids == ["a1"]
    assert_typed(nothing)


def test_custom_fields_keep_odd_names_and_values_as_text():
    odd = {"name": "Zoë 😀", "id": "mine", "amount": "12", "when": "2026-01-01", "at": "2026-01-01T00:00:00+00:00",
           "": "empty name", "a.b c": "x", "naïve": "", "quote\"d": "back\\slash", "line": "two\nlines"}
    body = answer(record("a1", custom=odd), record("b2"), record("c3", custom={"later": "only here"}))
    messages = read_lookup_answers([(["a1", "b2", "c3"], body)]).messages
    assert list(messages.columns) == [*MESSAGE_COLUMNS, "name", "custom_id", "amount", "when", "at", "", "a.b c",
                                      "naïve", "quote\"d", "line", "later"]
    first = messages.iloc[0]
    assert first["id"] == "a1" and first["custom_id"] == "mine"  # a custom field named like a column gets a prefix
    assert [first[name] for name in ("name", "amount", "when", "at", "", "naïve", "quote\"d", "line")] == \
        ["Zoë 😀", "12", "2026-01-01", "2026-01-01T00:00:00+00:00", "empty name", "", "back\\slash", "two\nlines"]
    assert all(str(messages[name].dtype) == "string" for name in messages.columns[len(MESSAGE_COLUMNS):])
    assert messages["name"].isna().tolist() == [False, True, True]
    assert messages["later"].isna().tolist() == [True, True, False]


def test_custom_fields_that_look_like_dates_or_are_null_stay_text_or_missing():
    body = answer(record("a1", custom={"when": "2026-01-01", "n": "1"}), record("b2", custom={"when": "soon"}),
                  record("c3", customFields=None), record("d4", custom={"when": "2026-01-02T10:00:00Z", "n": None}))
    messages = read_lookup_answers([(["a1", "b2", "c3", "d4"], body)]).messages
    assert messages["when"].tolist()[:2] == ["2026-01-01", "soon"]
    assert messages["when"].iloc[3] == "2026-01-02T10:00:00Z"
    assert messages["when"].isna().tolist() == [False, False, True, False]
    assert messages["n"].isna().tolist() == [False, True, True, True]


def test_many_large_answers_read_across_pyarrow_blocks_keep_their_order():
    answers = []
    for batch in range(40):
        ids = [f"{batch:04d}{n:016d}" for n in range(100)]
        text = "x" * 300 + "é"
        answers.append((ids, answer(*(record(i, message=f"{i} {text}", custom={"k": i} if n % 2 else None)
                                      for n, i in enumerate(ids)))))
    assert sum(len(body) for _, body in answers) > 2 * (1 << 20)
    records = read_lookup_answers(answers)
    expected = [i for ids, _ in answers for i in ids]
    assert records.messages["id"].tolist() == expected
    assert records.messages["message"].str.split(" ").str[0].tolist() == expected
    assert records.messages["k"].isna().iloc[0] and records.messages["k"].iloc[1] == expected[1]
    assert records.events["id"].tolist() == expected


def test_unicode_and_pretty_printed_answers_are_read():
    body = answer(record("a1", message="Olá \u2013 \"quoted\" \\ ☃ 😀", to="34600000001", custom={"nota": "é \u2603"}),
                  indent=2)
    records = read_lookup_answers([(["a1"], body), (["b2"], answer(record("b2")))])
    assert records.messages["id"].tolist() == ["a1", "b2"]
    assert records.messages["message"].iloc[0] == "Olá \u2013 \"quoted\" \\ ☃ 😀"
    assert records.messages["nota"].tolist()[0] == "é \u2603" and pd.isna(records.messages["nota"].iloc[1])


@pytest.mark.parametrize("body, what", [
    (answer(record("a1", campaignId="7")), "campaignId"),
    (answer(record("a1", isDelivered=1)), "isDelivered"),
    (answer({k: v for k, v in record("a1").items() if k != "to"}), "'to'"),
    (answer(record("a1", message=None)), "'message'"),
    (answer(record("a1", events=[{"type": "sent", "date": "2026-11-21T09:30:04", "isMobile": False, "browser": "",
                                  "os": ""}])), "offset"),
    (answer(record("a1", custom={"amount": 12})), "customFields"),
    (answer(record("a1", custom={"nested": {"a": "b"}})), "customFields"),
    (b'{"data": [', "JSON"),
    (b'{"error": {"code": 1}}', "data"),
])
def test_an_unreadable_answer_is_an_api_error_saying_what(body, what):
    with pytest.raises(ApiError, match="could not be read") as raised:
        read_lookup_answers([(["a1"], body)])
    assert what in str(raised.value)


@pytest.fixture(scope="module")
def sent(sb):
    client = Client(sb.base_url, sb.username, sb.api_password, retry=FAST_RETRY)
    to = [f"4477009{n:05d}" for n in range(250)]
    sub = [{"name": f"Zoë {n}", "id": "own", "code": f"{n:04d}"} for n in range(250)]
    answer = client.send_sms({"message": "Hi {name}", "to": to, "from": "Shop", "sub": sub})
    yield client, [item.id for item in answer.result]
    client.close()


def test_many_ids_across_chunks_and_threads_come_back_in_request_order(sent):
    client, ids = sent
    wanted = ids[::-1] + ["0" * 20] + ids[:3]  # repeats looked up once
    records = fetch_records(pd.Series(wanted + [None]), client=client, chunk_size=7, concurrency=3)
    assert_typed(records)
    assert records.messages["id"].tolist() == ids[::-1]
    assert records.unknown_ids == ["0" * 20]
    assert records.messages["name"].tolist() == [f"Zoë {n}" for n in range(249, -1, -1)]
    assert records.messages["code"].iloc[-1] == "0000"  # text, leading zeros kept
    assert (records.messages["custom_id"] == "own").all()
    assert set(records.events["id"]) <= set(ids)  # the real clock: some messages may have no event yet
    assert records.events["date"].notna().all()


def test_the_given_client_only_lends_its_configuration_so_a_closed_or_async_one_works(sb, sent):
    _, ids = sent
    closed = Client(sb.base_url, sb.username, sb.api_password)
    closed.close()
    assert fetch_records(ids[:5], client=closed).messages["id"].tolist() == ids[:5]
    asynchronous = AsyncClient(sb.base_url, sb.username, sb.api_password)
    assert fetch_records(ids[:5], client=asynchronous).messages["id"].tolist() == ids[:5]


def test_the_answers_read_are_let_go_once_the_frames_are_made(sent):
    client, ids = sent
    fetch_records(ids, client=client, chunk_size=10)
    gc.collect()
    answers = [o for o in gc.get_objects() if isinstance(o, httpx.Response) and o.request.url.path.startswith(
        "/api/rest/sms/")]  # each answer's bytes, once per lookup: a million records' would be ~0.5 GB
    assert answers == []


def test_only_unknown_ids_are_reported_not_raised(sent):
    client, _ = sent
    records = fetch_records(["0" * 20, "1" * 20], client=client)
    assert records.messages.empty and records.unknown_ids == ["0" * 20, "1" * 20]
    assert_typed(records)


def test_a_failing_service_raises_from_the_lookup_threads(sb, sent):
    client, ids = sent
    sb.faults(status=500)
    try:
        with pytest.raises(ApiError):
            fetch_records(ids, client=client, chunk_size=10, concurrency=4)
    finally:
        sb.clear_faults()


def test_bad_arguments_are_input_errors():
    with pytest.raises(InputError, match="chunk_size"):
        fetch_records(["a1"], chunk_size=101)
    with pytest.raises(InputError, match="concurrency"):
        fetch_records(["a1"], concurrency=0)
    with pytest.raises(InputError, match="','"):
        fetch_records(["a1,b2"])


def test_many_answers_are_read_in_groups_into_the_same_frames_custom_fields_as_text_wherever_they_appear():
    answers = []
    for n in range(120):  # more answers than one group holds; custom fields only in some, a date-like one late
        custom = {"tier": "gold"} if n % 40 == 5 else {"when": "2026-11-21"} if n == 110 else {}
        answers.append(([f"a{n}", f"gone{n}"], answer(record(f"a{n}", custom=custom))))
    records = read_lookup_answers(answers)
    assert_typed(records)
    assert records.messages["id"].tolist() == [f"a{n}" for n in range(120)]
    assert records.unknown_ids == [f"gone{n}" for n in range(120)]
    assert list(records.messages.columns[len(MESSAGE_COLUMNS):]) == ["tier", "when"]
    assert records.messages["tier"].dropna().tolist() == ["gold"] * 3
    assert records.messages.loc[110, "when"] == "2026-11-21" and str(records.messages["when"].dtype) == "string"
    assert records.events["id"].tolist() == [f"a{n}" for n in range(120)]
