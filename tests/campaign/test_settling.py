"""Unknown outcomes settled by delivery notifications: a dropped answer never makes anyone get a message twice."""

from __future__ import annotations

import time

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.ledger import Ledger
from sendframe.campaign.ledger_rows import ROW_TAG_PARAM
from sendframe.errors import SendframeWarning
from sendframe.sandbox import Sandbox


def test_rows_of_batches_whose_answer_was_lost_are_settled_by_their_notifications(tmp_path):
    contacts = pd.DataFrame({"phone": [f"3460088{i:04d}" for i in range(12)], "name": ["Ana"] * 12})
    ledger = tmp_path / "c.sqlite"
    with Sandbox() as sb, sendframe.Receiver(tmp_path / "callbacks.log") as receiver:
        client = sendframe.Client(sb.base_url, sb.username, sb.api_password)
        msg = sendframe.sms("Hi {name}", sender="Shop", notification_url=receiver.notification_url)
        sb.faults(drop=1.0)  # the service processes each request, then the connection drops: outcome unknown
        with pytest.warns(SendframeWarning, match="unknown outcome"):
            first = msg.send(contacts, client=client, ledger=ledger, batch_size=5, stop_after_unknown=0,
                             progress=False)
        sb.clear_faults()
        assert (first["outcome"] == "unknown").all()
        sent = sb.messages()
        assert len(sent) == 12
        assert sent["notification_url"].str.contains(f"{ROW_TAG_PARAM}=").all()  # one URL per row, tagged
        deadline = time.monotonic() + 20
        while len(receiver.callbacks()) < 12 and time.monotonic() < deadline:
            time.sleep(0.2)
        again = msg.send(contacts, client=client, ledger=ledger, batch_size=5, callbacks=receiver, progress=False)
        assert (again["outcome"] == "accepted").all()
        assert sorted(again["id"]) == sorted(sent["id"])  # each row has its own message's id
        by_recipient = dict(zip(sent["recipient"], sent["id"], strict=True))
        assert again["id"].tolist() == [by_recipient[p] for p in contacts["phone"]]
        assert len(sb.messages()) == 12  # nobody got it twice
        assert Ledger(ledger).unknown_rows().empty
        client.close()


def test_unknown_rows_no_notification_names_are_listed_and_not_sent_again(tmp_path):
    contacts = pd.DataFrame({"phone": [f"3460089{i:04d}" for i in range(4)], "name": ["Ana"] * 4})
    ledger = tmp_path / "c.sqlite"
    with Sandbox() as sb:
        client = sendframe.Client(sb.base_url, sb.username, sb.api_password)
        msg = sendframe.sms("Hi {name}", sender="Shop", notification_url="http://127.0.0.1:9/cb?id=%i&s=%s")
        sb.faults(status=500)  # answered without processing: unknown to the client, never sent
        with pytest.warns(SendframeWarning, match="unknown outcome") as first:
            msg.send(contacts, client=client, ledger=ledger, stop_after_unknown=0, progress=False)
        # no notifications were given: the warning says to give them, not that they named none of the rows
        said = " ".join(str(w.message) for w in first)
        assert "4 row(s) have an unknown outcome" in said and "run again with callbacks=" in said
        assert "The notifications given" not in said
        sb.clear_faults()
        no_news = pd.DataFrame({"id": pd.Series([], dtype="str"), ROW_TAG_PARAM: pd.Series([], dtype="str")})
        with pytest.warns(SendframeWarning, match="The notifications given name none of them") as second:
            again = msg.send(contacts, client=client, ledger=ledger, callbacks=no_news, progress=False)
        assert "with callbacks=" not in " ".join(str(w.message) for w in second)
        assert (again["outcome"] == "unknown").all() and sb.messages().empty
        client.close()
