"""A send from a Dask frame, killed with SIGKILL and run again: nobody gets the message twice."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pandas as pd
import pytest

import sendframe
from sendframe import sandbox
from sendframe.campaign.ledger import Ledger
from sendframe.errors import CampaignStoppedWarning
from sendframe.scale.partitions import from_pandas
from sendframe.scale.sending import PartitionLedger
from tests.scale.data import computed

dd = pytest.importorskip("dask.dataframe")

N = 240
SCRIPT = textwrap.dedent("""
    import sys, warnings
    import dask.dataframe as dd
    import sendframe
    contacts, ledger, out = sys.argv[1:4]
    frame = dd.read_parquet(contacts)
    msg = sendframe.sms("Hi {name}", sender="Shop")
    print("ready", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = msg.send(frame, ledger=ledger, out=out, batch_size=10, concurrency=2, requests_per_second=6,
                          progress=False)
    print(result["outcome"].value_counts().compute().to_dict(), flush=True)
""")


def _recorded(ledger) -> int:
    """Rows with an intent in the ledger (read-only: the send is writing)."""
    try:
        with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT COALESCE(SUM(size), 0) FROM batches").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _contacts(folder) -> list[str]:
    phones = [f"44791140{i:04d}" for i in range(N)]
    phones[150] = phones[10]  # a repeat in another partition: skipped, never sent twice
    frame = pd.DataFrame({"phone": phones, "name": [f"N{i}" for i in range(N)]})
    folder.mkdir()
    for part in range(4):
        frame.iloc[part * 60:(part + 1) * 60].to_parquet(folder / f"part{part}.parquet", index=False)
    return phones


@pytest.mark.slow
def test_a_send_from_a_dask_frame_killed_and_resumed_sends_each_recipient_once(tmp_path):
    phones = _contacts(tmp_path / "contacts")
    script = tmp_path / "send.py"
    script.write_text(SCRIPT)
    ledger, out = tmp_path / "c.sqlite", tmp_path / "results.parquet"
    args = [sys.executable, str(script), str(tmp_path / "contacts"), str(ledger), str(out)]
    with sandbox.Sandbox() as sb:
        env = {**os.environ, "SENDFRAME_BASE_URL": sb.base_url, "SENDFRAME_USERNAME": sb.username,
               "SENDFRAME_API_PASSWORD": sb.api_password}
        sb.faults(delay_s=0.1)
        first = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert first.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _recorded(ledger) < 70:
            time.sleep(0.05)  # killed once the second partition is under way
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
        recorded = len(Ledger(ledger).rows())
        sb.clear_faults()
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        messages = sb.messages()

    assert 0 < recorded < N - 1, f"the kill left {recorded} rows recorded"
    sent = messages[messages["recipient"].isin(phones)]["recipient"].value_counts()
    assert sent.max() == 1, f"sent twice: {sent[sent > 1].index.tolist()}"
    unknown = set(Ledger(ledger).unknown_rows()["recipient"])
    assert set(sent.index) | unknown == set(phones), "a recipient was neither sent nor listed as unknown"
    result = pd.read_parquet(out).sort_index()
    assert len(result) == N and result.index.tolist() == list(range(N))
    assert result.loc[150, "outcome"] == "skipped_duplicate"
    assert set(result["outcome"].astype(str)) <= {"accepted", "unknown", "skipped_duplicate"}
    assert len(os.listdir(out)) == 4  # one file per partition


class CancelAfterFirstBatch:
    """A progress object (reset/update, as the Composer's bar) that presses cancel once a batch is answered."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel

    def reset(self, total: int) -> None:
        pass

    def update(self, n: int) -> None:
        self.cancel.set()


def test_cancel_of_a_dask_send_starts_no_new_batch_and_the_next_run_finishes_once(sb, client, tmp_path):
    sb.reset()
    phones = [f"44791150{i:04d}" for i in range(40)]
    # pandas' str columns kept (Dask's own from_pandas would make them string[pyarrow]), so the result
    # read back from Parquet is compared below with a pandas send of the very same str columns
    frame = from_pandas(pd.DataFrame({"phone": phones, "name": [f"N{i}" for i in range(40)]}), npartitions=4)
    msg = sendframe.sms("Hi {name}", sender="Shop")
    cancel = threading.Event()
    ledger, out = tmp_path / "c.sqlite", tmp_path / "results.parquet"
    with pytest.warns(CampaignStoppedWarning, match=r"cancelled after partition 1 of 4: the 30 row\(s\)"):
        result = msg.send(frame, client=client, ledger=ledger, out=out, batch_size=2, concurrency=1,
                          progress=CancelAfterFirstBatch(cancel), cancel=cancel)
    result = computed(result)
    assert result.index.tolist() == list(range(10)) and len(os.listdir(out)) == 1
    assert result["outcome"].astype(str).tolist() == ["accepted"] * 2 + ["not_sent"] * 8  # as a pandas send says
    assert len(sb.messages()) == 2
    lazy = msg.send(frame, client=client, ledger=ledger, out=out, batch_size=2, progress=False)
    finished = computed(lazy)
    assert finished["outcome"].eq("accepted").all() and len(finished) == 40
    assert sorted(sb.messages()["recipient"]) == sorted(phones)  # each once
    # a pandas send of the same rows on the same ledger sends nothing more and answers the same result,
    # dtypes included (the Dask result's index is named "row": the column its Parquet files hold it in)
    again = msg.send(frame.compute(), client=client, ledger=ledger, batch_size=2, progress=False)
    assert len(sb.messages()) == 40
    pd.testing.assert_frame_equal(finished, again.rename_axis("row"))


def test_a_partition_lookup_reads_only_the_batches_of_its_rows(tmp_path):
    path = tmp_path / "c.sqlite"
    with Ledger(path) as ledger:
        for batch in range(1, 101):  # 100 partitions of 10 rows, one batch each, all with one recipient
            ledger.record_intent(batch, "f", [(str(10 * (batch - 1) + i), "447700900001") for i in range(10)])
        assert ledger.key_spans()[7] == (60, 69)
    with PartitionLedger(path) as journal:
        journal.scope = range(60, 70)
        keys = [str(k) for k in range(60, 70)]
        found = journal.lookup(keys, ["447700900001"] * 10)
        assert found["batch"].tolist() == [7] * 10 and found["row_key"].tolist() == keys
        # the same recipient in a ledger row of another partition is never this partition's row
        journal.scope = range(1000, 1010)
        assert journal.lookup(["1000"], ["447700900001"])["state"].isna().all()
    with Ledger(path) as ledger:  # a lookup limited to some batches matches among their rows only
        assert ledger.lookup(["5"], ["447700900001"], batches=[3])["row_key"].tolist() == ["20"]
        assert ledger.lookup(["5"], ["447700900001"])["row_key"].tolist() == ["5"]


def test_max_cost_caps_the_whole_dask_campaign_not_each_partition(sb, client, tmp_path):
    sb.reset()
    frame = from_pandas(pd.DataFrame({"phone": [f"44791160{i:04d}" for i in range(40)], "name": ["Ana"] * 40}),
                        npartitions=4)
    msg = sendframe.sms("Hi {name}", sender="Shop")
    unit = msg.estimate(frame.compute())["cost"].iloc[0]
    ledger, out = tmp_path / "budget.sqlite", tmp_path / "results.parquet"
    with pytest.warns(sendframe.RowsSkippedWarning, match="max_cost"):
        first = computed(msg.send(frame, client=client, ledger=ledger, out=out, batch_size=2, concurrency=1,
                                  progress=False, max_cost=unit * 5))  # two batches of two, in the whole campaign
    assert first["outcome"].astype(str).value_counts().to_dict() == {"accepted": 4, "not_sent": 36}
    assert len(sb.messages()) == 4
    with pytest.warns(sendframe.RowsSkippedWarning, match="max_cost"):
        second = computed(msg.send(frame, client=client, ledger=ledger, out=out, batch_size=2, progress=False,
                                   max_cost=unit * 8))  # the ledger's four count: two more batches
    assert second["outcome"].astype(str).value_counts().to_dict() == {"accepted": 8, "not_sent": 32}
    assert len(sb.messages()) == 8 and sb.messages()["cost"].sum() <= unit * 8 + 1e-9
