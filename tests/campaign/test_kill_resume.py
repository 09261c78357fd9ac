"""The drill: a campaign process killed with SIGKILL at random moments, then resumed.

Afterwards every recipient has exactly one accepted message in the sandbox's store, or is listed
as unknown by the ledger; none is sent twice and none is silently missing. Half the kills wait
until a batch's intent is on disk without its answer, so the drill provably covers the case that
matters (a request in flight when the process dies); the test checks that it did.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from sendframe import sandbox
from sendframe.campaign.ledger import Ledger

N = 400
SCRIPT = textwrap.dedent("""
    import sys
    import pandas as pd
    from sendframe import send_sms
    n, ledger = int(sys.argv[1]), sys.argv[2]
    contacts = pd.DataFrame({"phone": [f"44791130{i:04d}" for i in range(n)], "name": [f"N{i}" for i in range(n)]})
    print("ready", flush=True)
    result = send_sms(contacts, "Hi {name}", "Shop", ledger=ledger, batch_size=10, concurrency=3,
                      requests_per_second=4, progress=False)
    print(result["outcome"].value_counts().to_dict())
""")


def _pending_intents(ledger) -> int:
    """Batches whose intent is committed and whose answer is not (read-only: the campaign is writing)."""
    try:
        with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM batches WHERE state = 'intent'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def run_campaign(script, args, env, *, kill_after=None, kill_in_flight=None, timeout=120):
    """Run the campaign script to the end, or SIGKILL it after ``kill_after`` seconds or, given the ledger as
    ``kill_in_flight``, as soon as a batch's intent is on disk without its answer."""
    process = subprocess.Popen([sys.executable, str(script), *map(str, args)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if kill_after is None and kill_in_flight is None:
        out, err = process.communicate(timeout=timeout)
        assert process.returncode == 0, err
        return out
    assert process.stdout.readline().strip() == "ready"  # imports done: the kill lands during the send
    if kill_in_flight is not None:
        deadline = time.monotonic() + 10
        while not _pending_intents(kill_in_flight) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
    else:
        time.sleep(kill_after)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    return None


@pytest.mark.slow
def test_a_campaign_killed_at_random_moments_never_sends_twice_nor_loses_a_row(tmp_path):
    rng = random.Random(20261121)
    script = tmp_path / "campaign.py"
    script.write_text(SCRIPT)
    ledger = tmp_path / "drill.sqlite"
    left_unknown = []  # after each kill: how many rows were caught between their intent and their answer
    with sandbox.Sandbox() as sb:
        env = {**os.environ, "SENDFRAME_BASE_URL": sb.base_url, "SENDFRAME_USERNAME": sb.username,
               "SENDFRAME_API_PASSWORD": sb.api_password}
        sb.faults(delay_s=0.2)  # each request takes a while, so kills land mid-request too
        for kill in range(6):
            if kill % 2:
                run_campaign(script, [N, ledger], env, kill_in_flight=ledger)
            else:
                run_campaign(script, [N, ledger], env, kill_after=rng.uniform(0.2, 1.2))
            left_unknown.append(len(Ledger(ledger).unknown_rows()))
        recorded_before_resume = len(Ledger(ledger).rows())
        sb.clear_faults()
        run_campaign(script, [N, ledger], env)  # resume to the end
        messages = sb.messages()

    # the drill was not vacuous: some kill caught a batch in flight, and the last run had rows left to send
    assert max(left_unknown) > 0, f"no kill landed between a batch's intent and its answer: {left_unknown}"
    assert 0 < recorded_before_resume < N, f"the kills left {recorded_before_resume} of {N} rows recorded"

    rows = Ledger(ledger).rows()
    unknown = Ledger(ledger).unknown_rows()
    recipients = [f"44791130{i:04d}" for i in range(N)]
    sent = messages[messages["recipient"].isin(recipients)]["recipient"].value_counts()

    assert sent.max() == 1, f"sent twice: {sent[sent > 1].index.tolist()}"
    assert set(rows["recipient"]) == set(recipients), "a row is missing from the ledger"
    assert set(rows["state"]) <= {"accepted", "unknown"}
    assert not unknown.empty
    accepted = rows[rows["state"] == "accepted"]
    assert set(accepted["recipient"]) <= set(sent.index), "accepted in the ledger but not in the store"
    stored_ids = set(messages["id"])
    assert set(accepted["id"]) <= stored_ids
    in_store_not_accepted = set(sent.index) - set(accepted["recipient"])
    assert in_store_not_accepted <= set(unknown["recipient"]), "sent but neither accepted nor listed as unknown"
    assert set(unknown["recipient"]) == set(rows.loc[rows["state"] == "unknown", "recipient"])
