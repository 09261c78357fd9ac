"""The drill with a receiver: a campaign killed at random moments, then every unknown row settled by its notification.

Rows a killed run (or a lost answer) left unknown either reached the service (then their notification, which names the
row, settles them as accepted with their message id) or never did (no notification ever names them:
they are sent by the last run, asked to re-send what the notifications did not settle). In the end
every recipient has exactly one message, none is missing, and none is left unknown.
"""

from __future__ import annotations

import os
import random
import textwrap
import time

import pytest

import sendframe
from sendframe import sandbox
from sendframe.campaign.ledger import Ledger
from tests.campaign.test_kill_resume import run_campaign

N = 300
RECIPIENTS = [f"44791140{i:04d}" for i in range(N)]
SCRIPT = textwrap.dedent("""
    import sys
    import pandas as pd
    import sendframe
    n, ledger, url, log, resend = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
    contacts = pd.DataFrame({"phone": [f"44791140{i:04d}" for i in range(n)], "name": [f"N{i}" for i in range(n)]})
    msg = sendframe.sms("Hi {name}", sender="Shop", notification_url=url)
    print("ready", flush=True)
    result = msg.send(contacts, ledger=ledger, batch_size=10, concurrency=3, requests_per_second=4, progress=False,
                      callbacks=log if resend else None, resend_unknown=resend)
    print(result["outcome"].value_counts().to_dict())
""")


@pytest.mark.slow
def test_every_row_a_killed_campaign_left_unknown_is_settled_by_its_notification_or_sent_once(tmp_path):
    rng = random.Random(20261124)
    script = tmp_path / "campaign.py"
    script.write_text(SCRIPT)
    ledger, log = tmp_path / "drill.sqlite", tmp_path / "callbacks.log"
    unknown_after_kills = []
    with sandbox.Sandbox() as sb, sendframe.Receiver(log) as receiver:
        env = {**os.environ, "SENDFRAME_BASE_URL": sb.base_url, "SENDFRAME_USERNAME": sb.username,
               "SENDFRAME_API_PASSWORD": sb.api_password}
        args = [N, ledger, receiver.notification_url, log, 0]
        # requests take a while, so kills land mid-request; some answers are lost after the service processed them
        sb.faults(delay_s=0.2, drop=0.3)
        for kill in range(4):
            if kill % 2:
                run_campaign(script, args, env, kill_in_flight=ledger)
            else:
                run_campaign(script, args, env, kill_after=rng.uniform(0.3, 1.2))
            unknown_after_kills.append(len(Ledger(ledger).unknown_rows()))
        sb.clear_faults()
        sent = sb.messages()
        sent = sent[sent["recipient"].isin(RECIPIENTS)]
        deadline = time.monotonic() + 60  # every message the service accepted notifies its row
        while time.monotonic() < deadline:
            heard = set(receiver.callbacks()["id"].dropna())
            if set(sent["id"]) <= heard:
                break
            time.sleep(0.3)
        assert set(sent["id"]) <= heard, "the sandbox did not notify every accepted message in time"
        unknown = Ledger(ledger).unknown_rows()
        reached = unknown["recipient"].isin(sent["recipient"])
        unknown_reached, unknown_not_reached = int(reached.sum()), int((~reached).sum())
        settle_then_send = [N, ledger, receiver.notification_url, log, 1]  # settle, then send what never left
        run_campaign(script, settle_then_send, env, timeout=180)
        messages = sb.messages()

    assert max(unknown_after_kills) > 0, f"no kill left a row unknown: {unknown_after_kills}"
    # not vacuous: some unknown rows had reached the service (settled, never re-sent), and the last run sent more
    assert unknown_reached > 0, f"no unknown row had reached the service ({unknown_not_reached} had not)"
    per_recipient = messages[messages["recipient"].isin(RECIPIENTS)]["recipient"].value_counts()
    assert per_recipient.max() == 1, f"sent twice: {per_recipient[per_recipient > 1].index.tolist()}"
    assert set(per_recipient.index) == set(RECIPIENTS), "a recipient got nothing"
    rows = Ledger(ledger).rows()
    assert Ledger(ledger).unknown_rows().empty
    assert set(rows["state"]) == {"accepted"}
    by_recipient = dict(zip(messages["recipient"], messages["id"], strict=True))
    accepted = rows.drop_duplicates("recipient", keep="last")
    assert (accepted["id"] == accepted["recipient"].map(by_recipient)).all()  # each row holds its own message's id
