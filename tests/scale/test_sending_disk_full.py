"""A Dask send whose ``out`` dataset's disk is full: a clear error naming the partition's file, and a run again
with the same ledger (once there is space) writes the results without sending anyone twice."""

from __future__ import annotations

import pandas as pd
import pytest

import sendframe
from sendframe.errors import DiskFullError
from sendframe.scale.runtime import from_pandas

dd = pytest.importorskip("dask.dataframe")


def test_a_full_disk_under_out_names_the_file_and_the_next_run_sends_nobody_twice(sb, client, small_disk, tmp_path):
    phones = [f"4479117{i:05d}" for i in range(40)]
    frame = from_pandas(pd.DataFrame({"phone": phones, "name": ["N"] * 40}), npartitions=2)
    msg = sendframe.sms("Hi {name}", sender="Shop")
    out, ledger = small_disk.path / "out", tmp_path / "c.sqlite"
    out.mkdir()
    small_disk.fill()
    with pytest.raises(DiskFullError, match=f"The disk holding {out}/part.00000.parquet is full"):
        msg.send(frame, ledger=ledger, out=out, client=client, progress=False)
    small_disk.free()
    result = msg.send(frame, ledger=ledger, out=out, client=client, progress=False).compute()
    assert result["outcome"].eq("accepted").all() and len(result) == 40
    messages = sb.messages()
    assert (messages[messages["recipient"].isin(phones)]["recipient"].value_counts() == 1).all()
