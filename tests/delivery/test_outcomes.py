"""The per-recipient outcome table on the contacts' index, and summaries grouped by any column."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

import sendframe
from sendframe.api.client import Client
from sendframe.campaign.shortcuts import send_sms
from sendframe.delivery.metrics import delivery_summary
from sendframe.delivery.outcomes import message_outcomes, outcomes
from sendframe.delivery.receiver import Receiver
from sendframe.errors import InputError, UnknownOptionError
from sendframe.sandbox import Sandbox

T0 = pd.Timestamp("2026-11-21 10:00", tz="UTC")


def contacts() -> pd.DataFrame:
    return pd.DataFrame({
        "phone": ["600000001", "600000002", "600000002", "bad", "7700900003", "600000009"],
        "segment": ["gold", "gold", "silver", "silver", "gold", "silver"],
        "id": [101, 102, 103, 104, 105, 106],  # the analyst's own customer id
        "country": ["Spain", "Spain", "Spain", "Spain", "UK", "Spain"],
    }, index=[10, 11, 12, 13, 14, 15])


def results() -> pd.DataFrame:
    """A send result as the lead's send returns it: on the contacts' index, with recipient and text."""
    return pd.DataFrame({
        "id": ["m1", "m2", None, None, "m5", None],
        "accepted": [True, True, False, False, True, False],
        "outcome": ["accepted", "accepted", "skipped_duplicate", "skipped_invalid", "accepted", "rejected"],
        "campaign_id": [7] * 6,
        "recipient": ["34600000001", "34600000002", "34600000002", None, "447700900003", "34600000009"],
        "text": ["Hi Ana", "Hi Bo", "Hi Bo", "Hi Cy", "Hi Di", "Hi Ed"],
    }, index=[10, 11, 12, 13, 14, 15])


def callbacks() -> pd.DataFrame:
    rows = [("m1", "DELIVRD", 1, "01"), ("m2", "UNDELIV", 2, "03"), ("m5", "ACCEPTD", 4, "10")]
    frame = pd.DataFrame(rows, columns=["id", "status", "delivery", "mnc"])
    return frame.assign(part=1, cost=0.05, sent_at=T0, reported_at=T0 + pd.Timedelta(minutes=1), recipient=None,
                        campaign_id=7, sending_id=1)


def test_the_results_recipient_column_is_used_without_recipients():
    table = message_outcomes(results(), callbacks())
    assert table["recipient"].tolist()[:2] == ["34600000001", "34600000002"]
    assert table["country"].fillna("?").tolist() == ["ES", "ES", "ES", "?", "GB", "ES"]
    given = message_outcomes(results(), callbacks(), recipients=pd.Series(["1"] * 6, index=results().index))
    assert given["recipient"].tolist() == ["1"] * 6  # recipients= still wins


def _records(order: list[int], ids: list[str | None]) -> SimpleNamespace:
    """Records of ``ids`` (a click on each even one), their messages and events taken in ``order``."""
    messages = pd.DataFrame({"id": pd.Series(ids, dtype="string"), "is_clicked": [i % 2 == 0 for i in range(len(ids))]})
    events = pd.DataFrame({"id": pd.Series([i for i in ids for _ in range(2)], dtype="string"),
                           "type": ["sent", "delivered"] * len(ids),
                           "date": [T0 + pd.Timedelta(seconds=s) for s in range(2 * len(ids))]})
    events_order = [2 * i + k for i in order for k in (0, 1)]
    return SimpleNamespace(messages=messages.iloc[order], events=events.iloc[events_order])


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 0, 1]], ids=["records in the rows' order", "records shuffled"])
def test_records_are_matched_to_their_rows_in_any_order(order):
    table = message_outcomes(results(), callbacks(), _records(order, ["m1", "m2", "m5"]))
    assert table["clicked"].tolist() == [True, False, False, False, True, False]
    assert table["delivered_at"].tolist()[:2] == [T0 + pd.Timedelta(seconds=1), T0 + pd.Timedelta(seconds=3)]
    assert table["status"].astype(str).tolist() == ["DELIVRD", "UNDELIV", "NOT_SENT", "NOT_SENT", "DELIVRD",
                                                    "NOT_SENT"]


def test_a_row_without_an_id_takes_no_record_and_other_ids_are_left_out():
    stray = _records([0, 1, 2], [None, "m2", "zz"])  # a record without an id, one of another campaign
    noted = pd.concat([callbacks(), callbacks().assign(id="zz", status="UNDELIV")], ignore_index=True)
    table = message_outcomes(results(), noted, stray)
    assert table["clicked"].tolist() == [False] * 6  # m2's record is not clicked; the rows without an id have none
    assert table["status"].astype(str).tolist()[:2] == ["DELIVRD", "UNDELIV"]


def test_skipped_rows_keep_their_outcome_and_are_not_sent():
    table = message_outcomes(results(), callbacks())
    assert table["outcome"].tolist() == ["accepted", "accepted", "skipped_duplicate", "skipped_invalid", "accepted",
                                         "rejected"]
    assert table["status"].astype(str).tolist() == ["DELIVRD", "UNDELIV", "NOT_SENT", "NOT_SENT", "PENDING", "NOT_SENT"]


def test_outcomes_are_on_the_contacts_index_with_their_columns_and_the_text():
    table = sendframe.outcomes(results(), callbacks(), contacts=contacts())
    assert table.index.tolist() == [10, 11, 12, 13, 14, 15]
    assert table["segment"].tolist() == contacts()["segment"].tolist()
    assert table["text"].tolist()[0] == "Hi Ana"
    # contact columns named like outcome columns are kept under contact_<name>
    assert table["contact_id"].tolist() == [101, 102, 103, 104, 105, 106] and table["id"].tolist()[0] == "m1"
    assert table["contact_country"].tolist()[4] == "UK" and table["country"].tolist()[4] == "GB"


def test_contacts_not_in_the_results_get_an_empty_outcome_and_strangers_are_refused():
    wider = pd.concat([contacts(), pd.DataFrame({"phone": ["600000077"], "segment": ["gold"]}, index=[16])])
    table = outcomes(results(), contacts=wider)
    assert table.index.tolist()[-1] == 16 and pd.isna(table["outcome"].iloc[-1])
    with pytest.raises(InputError, match=r"1 row\(s\) of the results are not rows of the contacts \(index \[15\]\)"):
        outcomes(results(), contacts=contacts().drop(index=15))
    with pytest.raises(InputError, match="repeats labels"):
        outcomes(results(), contacts=contacts().set_axis([10, 10, 12, 13, 14, 15]))
    with pytest.raises(UnknownOptionError, match="Did you mean 'contacts'"):
        outcomes(results(), contact=contacts())


def test_a_summary_by_a_contact_column_counts_each_segment():
    summary = delivery_summary(results(), callbacks(), contacts=contacts(), by="segment")
    gold, silver = summary.loc["gold"], summary.loc["silver"]
    counts = (gold["sent"], gold["skipped"], gold["accepted"], gold["delivered"], gold["failed"], gold["pending"])
    assert counts == (3, 0, 3, 1, 1, 1)
    assert (silver["sent"], silver["skipped"], silver["rejected"], silver["accepted"]) == (1, 2, 1, 0)
    assert gold["delivery_rate"] == pytest.approx(1 / 3)


def test_a_summary_by_several_columns_of_outcomes_and_contacts():
    summary = delivery_summary(results(), callbacks(), contacts=contacts(), by=["segment", "outcome"])
    assert list(summary.index.names) == ["segment", "outcome"]
    row = summary.loc[("silver", "skipped_invalid")]
    assert row["skipped"] == 1 and row["sent"] == 0
    assert delivery_summary(results(), callbacks(), by="status")["sent"].sum() == 4


def test_an_unknown_grouping_column_names_the_columns_and_the_closest_one():
    with pytest.raises(InputError, match=r"cannot group by 'segmnt'.*Did you mean 'segment'\?.*Columns: .*recipient"):
        delivery_summary(results(), callbacks(), contacts=contacts(), by=["segmnt"])
    with pytest.raises(InputError, match="has a column of that name"):
        delivery_summary(results(), callbacks(), by="sent")
    with pytest.raises(UnknownOptionError, match="Did you mean 'by'"):
        delivery_summary(results(), callbacks(), bye="segment")


def test_inputs_are_not_changed():
    given, people = results(), contacts()
    outcomes(given, callbacks(), contacts=people)
    delivery_summary(given, callbacks(), contacts=people, by="segment")
    pd.testing.assert_frame_equal(given, results())
    pd.testing.assert_frame_equal(people, contacts())


def test_a_campaign_through_the_sandbox_summarised_by_segment(tmp_path):
    people = pd.DataFrame({"phone": ["447700900001", "447700900002", "447700900101", "447700900201"],
                           "segment": ["new", "new", "old", "old"]}, index=[5, 6, 7, 8])
    with Sandbox() as sandbox, Receiver(tmp_path / "cb.log") as receiver:
        client = Client(sandbox.base_url, sandbox.username, sandbox.api_password)
        sent = send_sms(people, "Hello", "Shop", client=client, notification_url=receiver.notification_url,
                        progress=False)
        if "recipient" not in sent:  # until the send result carries it
            sent = sent.assign(recipient=people["phone"])
        arrived = receiver.wait_for(sent, timeout=30, progress=False)
    table = sendframe.outcomes(sent, arrived, contacts=people)
    assert table.index.tolist() == [5, 6, 7, 8]
    assert table["status"].astype(str).tolist() == ["DELIVRD", "DELIVRD", "UNDELIV", "REJECTD"]
    summary = sendframe.delivery_summary(sent, arrived, contacts=people, by="segment")
    assert summary.loc["new", "delivered"] == 2 and summary.loc["old", "failed"] == 2
    assert summary.loc["new", "delivery_rate"] == 1.0
