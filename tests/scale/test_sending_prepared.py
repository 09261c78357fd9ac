"""A send from a Dask frame prepares each partition once and sends the rows, at the cost, a pandas send does."""

from __future__ import annotations

import pandas as pd
import pytest

import sendframe
from sendframe.campaign import message as message_module
from sendframe.scale.partitions import from_pandas
from tests.scale.data import computed

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

COMPARED = ["recipient", "text", "accepted", "outcome", "reason"]


def _contacts(prefix: str) -> pd.DataFrame:
    phones = [f"{prefix}{i:04d}" for i in range(40)]
    phones[25] = phones[3]  # a repeat in a later partition
    phones[7] = phones[6]  # a repeat in the same partition
    phones[12] = "x"  # not a phone number
    return pd.DataFrame({"phone": phones, "name": [f"N{i}" for i in range(40)]})


def _sent_as_pandas(sb, client, msg, frame, result, tmp_path) -> None:
    """A pandas send of ``frame`` (another ledger) answers ``result``'s rows and sends the same recipients."""
    before = sb.messages()["recipient"].tolist()
    with pytest.warns(sendframe.RowsSkippedWarning):
        expected = msg.send(frame, client=client, ledger=tmp_path / "pandas.sqlite", batch_size=5, progress=False)
    after = sb.messages()["recipient"].tolist()
    pd.testing.assert_frame_equal(result[COMPARED].reset_index(drop=True), expected[COMPARED].reset_index(drop=True))
    assert sorted(after) == sorted(before * 2) and len(before) == 37  # 40 rows, two repeats and an invalid one


def _counted_prepare(monkeypatch) -> list[int]:
    """The number of rows of each call of the real ``prepare`` of a pandas frame in this process, from now on."""
    real, calls = message_module.prepare, []

    def counted(*args, **options):
        calls.append(len(args[1]))
        return real(*args, **options)

    monkeypatch.setattr(message_module, "prepare", counted)
    return calls


def test_a_dask_send_prepares_each_partition_once_and_sends_what_pandas_sends(sb, client, tmp_path, monkeypatch):
    sb.reset()
    frame, msg = _contacts("44791170"), sendframe.sms("Hi {name}", sender="Shop")
    prepared = _counted_prepare(monkeypatch)
    with pytest.warns(sendframe.RowsSkippedWarning, match=r"2 whose recipient repeats an earlier row"):
        lazy = msg.send(from_pandas(frame, npartitions=4), client=client, ledger=tmp_path / "dask.sqlite",
                        out=tmp_path / "results.parquet", batch_size=5, progress=False)
    assert prepared == [10, 10, 10, 10]  # once per partition: the repeats, the costs and the send read that
    result = computed(lazy)
    assert result.loc[[7, 12, 25], "outcome"].astype(str).tolist() == ["skipped_duplicate", "skipped_invalid",
                                                                        "skipped_duplicate"]
    monkeypatch.undo()
    _sent_as_pandas(sb, client, msg, frame, result, tmp_path)


def test_a_rerun_counts_the_earlier_spend_of_later_partitions_before_its_first_batch(sb, client, tmp_path):
    sb.reset()
    frame = pd.DataFrame({"phone": [f"44791180{i:04d}" for i in range(40)], "name": ["Ana"] * 40})
    msg = sendframe.sms("Hi {name}", sender="Shop")
    unit = msg.estimate(frame)["cost"].iloc[0]
    ledgers = {"dask": tmp_path / "dask.sqlite", "pandas": tmp_path / "pandas.sqlite"}
    for ledger in ledgers.values():  # an earlier run sent the ten rows of the last partition
        msg.send(frame.iloc[30:], client=client, ledger=ledger, batch_size=5, progress=False)
    how = {"client": client, "batch_size": 2, "concurrency": 1, "progress": False, "max_cost": unit * 14}
    with pytest.warns(sendframe.RowsSkippedWarning, match="max_cost"):
        lazy = msg.send(from_pandas(frame, npartitions=4), ledger=ledgers["dask"], out=tmp_path / "out.parquet", **how)
    result = computed(lazy)
    with pytest.warns(sendframe.RowsSkippedWarning, match="max_cost"):
        expected = msg.send(frame, ledger=ledgers["pandas"], **how)
    # the earlier ten count at once: two batches of two fit under 14, then nothing, in every partition
    assert result["outcome"].astype(str).tolist() == ["accepted"] * 4 + ["not_sent"] * 26 + ["accepted"] * 10
    pd.testing.assert_frame_equal(result[COMPARED].reset_index(drop=True), expected[COMPARED].reset_index(drop=True))
    assert len(sb.messages()) == 2 * (10 + 4)


def test_on_a_distributed_cluster_each_partition_is_prepared_once_there(sb, client, tmp_path, monkeypatch):
    sb.reset()
    frame, msg = _contacts("44791190"), sendframe.sms("Hi {name}", sender="Shop")
    prepared_here = _counted_prepare(monkeypatch)  # the workers are other processes: this counts this one's calls
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, memory_limit="2GiB") as cluster,
          distributed.Client(cluster) as dask_client):
        with distributed.get_task_stream(dask_client) as tasks, pytest.warns(sendframe.RowsSkippedWarning):
            lazy = msg.send(from_pandas(frame, npartitions=4), client=client, ledger=tmp_path / "dask.sqlite",
                            out=tmp_path / "results.parquet", batch_size=5, progress=False)
        names = [str(task["key"][0] if isinstance(task["key"], tuple) else task["key"]) for task in tasks.data]
        assert sum(name.startswith("_prepared-") for name in names) == 4 and prepared_here == []
        result = computed(lazy)
    monkeypatch.undo()
    _sent_as_pandas(sb, client, msg, frame, result, tmp_path)
