"""A Dask send whose ``out`` dataset's disk is full: a clear error naming the partition's file, and a run again
with the same ledger (once there is space) writes the results without sending anyone twice."""

from __future__ import annotations

import tempfile

import pandas as pd
import pytest

import sendframe
from sendframe.errors import DiskFullError
from sendframe.scale.partitions import from_pandas

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


def test_a_full_disk_under_the_temporary_folder_names_the_stash_and_nothing_is_sent(sb, client, small_disk, tmp_path,
                                                                                     monkeypatch):
    # a Dask send on this machine keeps each prepared partition in a temporary folder until it sends it
    phones = [f"4479118{i:05d}" for i in range(40)]
    frame = from_pandas(pd.DataFrame({"phone": phones, "name": ["N"] * 40}), npartitions=2)
    msg = sendframe.sms("Hi {name}", sender="Shop")
    monkeypatch.setattr(tempfile, "tempdir", str(small_disk.path))
    small_disk.fill()
    with pytest.raises(DiskFullError, match=r"The disk holding .*part\.\d\.pickle is full.*TMPDIR.*Nothing was sent"):
        msg.send(frame, ledger=tmp_path / "c.sqlite", out=tmp_path / "out", client=client, progress=False)
    assert not sb.messages()["recipient"].isin(phones).any()
    small_disk.free()
    result = msg.send(frame, ledger=tmp_path / "c.sqlite", out=tmp_path / "out", client=client, progress=False)
    assert result.compute()["outcome"].eq("accepted").all() and len(result) == 40
