"""The shared measurement: reused only for the same settings and the same table content."""

from __future__ import annotations

import warnings

import pandas as pd

import sendframe
from sendframe.campaign.preview import forget, frame_fingerprint, last, measure_texts
from sendframe.text.measure import measure_frame

TEMPLATE = "Hola {name|capitalize}, debes {amount} EUR"


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"name": pd.array(["ana", "luís", None], dtype="str"), "amount": [1.5, 2.0, 3.25],
                         "city": ["Lugo", "Vigo", "Ourense"]})


def _fresh(frame: pd.DataFrame, encoding: str = "auto") -> pd.DataFrame:
    return measure_frame(frame, TEMPLATE, encoding=None if encoding == "auto" else encoding, unencodable=True)


def test_a_changed_value_row_order_or_setting_is_measured_again():
    frame = _frame()
    measure_texts(frame, TEMPLATE, encoding="auto")
    changed = frame.assign(name=pd.array(["ana", "LUÍS", None], dtype="str"))
    assert measure_texts(changed, TEMPLATE, encoding="auto")["text"].tolist()[1] == "Hola LUÍS, debes 2 EUR"
    amounts = frame.assign(amount=[1.5, 2.0, 9.0])
    pd.testing.assert_frame_equal(measure_texts(amounts, TEMPLATE, encoding="auto"), _fresh(amounts))
    reordered = frame.iloc[::-1]
    pd.testing.assert_frame_equal(measure_texts(reordered, TEMPLATE, encoding="auto"), _fresh(reordered))
    pd.testing.assert_frame_equal(measure_texts(frame, TEMPLATE, encoding="gsm"), _fresh(frame, "gsm"))
    longer = measure_texts(frame, TEMPLATE, encoding="gsm", link_base="https://a-much-longer-base.example")
    pd.testing.assert_frame_equal(longer, _fresh(frame, "gsm"))  # no special in the template: same texts


def test_a_column_the_template_does_not_read_does_not_matter_and_objects_are_never_reused():
    frame = _frame()
    assert frame_fingerprint(frame, ["name", "amount"]) == frame_fingerprint(frame.assign(city="x"), ["name", "amount"])
    with_objects = frame.assign(name=pd.Series([1, "1", True], dtype=object))
    assert frame_fingerprint(with_objects, ["name"]) is None
    as_text = measure_texts(with_objects, "{name}", encoding="auto")["text"].tolist()
    assert as_text == ["1", "1", "true"]


def test_preflight_then_estimate_of_one_table_agree_with_each_measured_alone():
    contacts = _frame().assign(phone=["34600000001", "34600000002", "34600000003"])
    msg = sendframe.sms(TEMPLATE, "Shop", parts=2, encoding="auto")
    msg.preflight(contacts)
    after = msg.estimate(contacts)
    measure_texts(contacts.iloc[:1], TEMPLATE, encoding="auto")  # another table measured in between
    alone = msg.estimate(contacts)
    pd.testing.assert_frame_equal(after, alone)
    returned = measure_texts(contacts, TEMPLATE, encoding="auto")
    returned.loc[0, "text"] = "changed by the caller"
    assert measure_texts(contacts, TEMPLATE, encoding="auto").loc[0, "text"] == "Hola Ana, debes 1.5 EUR"


def test_a_send_of_the_table_just_estimated_reuses_its_prepared_frame():
    frame = pd.DataFrame({"phone": ["34600123456", "34600123457", "x"], "name": ["Ana", "Bo", "Cy"]})
    msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto")
    prepared = msg.prepare(frame)
    assert msg.prepare(frame.copy()) is prepared  # same message, options and content: prepared once
    estimated = msg.estimate(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sendframe.errors.RowsSkippedWarning)
        sent = msg.send(frame, dry_run=True, progress=False)
    assert msg.prepare(frame) is prepared  # the estimate and the send read it; neither prepared again
    assert sent["text"].tolist() == estimated["text"].tolist() and sent["parts"].tolist()[:2] == [1, 1]
    assert msg.prepare(frame.assign(name=["Ana", "Bo", "Dee"])) is not prepared  # other content, prepared anew
    forget()
    assert msg.prepare(frame) is not prepared  # forgotten: prepared again
    assert msg.prepare(frame, keep="invalid") is not msg.prepare(frame)  # other options, prepared anew


def test_a_categorical_column_is_fingerprinted_by_its_codes_and_categories():
    frame = pd.DataFrame({"kind": pd.Categorical(["mobile", "fixed_line", "mobile"])})
    same = frame_fingerprint(frame, ["kind"])
    assert same is not None and same == frame_fingerprint(frame.copy(), ["kind"])
    recoded = frame.assign(kind=pd.Categorical(["mobile", "fixed_line", "fixed_line"]))
    renamed = frame.assign(kind=frame["kind"].cat.rename_categories({"mobile": "voip"}))
    ordered = frame.assign(kind=frame["kind"].cat.as_ordered())
    assert len({same, frame_fingerprint(recoded, ["kind"]), frame_fingerprint(renamed, ["kind"]),
                frame_fingerprint(ordered, ["kind"])}) == 4


def test_contacts_as_read_with_their_categorical_phone_type_are_prepared_once(tmp_path):
    csv = tmp_path / "contacts.csv"
    csv.write_text("phone,name\n34600123456,Ana\n34600123457,Bo\n")
    contacts = sendframe.read_contacts(csv)
    assert isinstance(contacts["phone_type"].dtype, pd.CategoricalDtype)
    msg = sendframe.sms("Hi {name}", sender="Shop")
    assert msg.prepare(contacts) is msg.prepare(contacts.copy())


def test_a_send_that_sends_lets_go_of_the_kept_preparation_and_measurement(client):
    frame = pd.DataFrame({"phone": ["34600123456", "34600123457"], "name": ["Ana", "Bo"]})
    msg = sendframe.sms("Hi {name}", sender="Shop")
    prepared = msg.prepare(frame)
    assert last("prepared") is not None and last("sms") is not None
    sent = msg.send(frame, client=client, progress=False)
    assert sent["outcome"].tolist() == ["accepted", "accepted"]
    assert last("prepared") is None and last("sms") is None  # the session holds the result, not the per-row table
    assert msg.prepare(frame) is not prepared
