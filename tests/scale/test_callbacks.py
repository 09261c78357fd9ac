"""Callback logs across files (receiver and access logs mixed, compressed), pandas and Dask alike."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sendframe
from sendframe.delivery.callbacks import latest_status
from sendframe.delivery.outcomes import message_outcomes
from sendframe.delivery.records import Records
from sendframe.scale.callbacks import read_logs
from tests.delivery.test_metrics import T0, campaign
from tests.scale.data import HEADER, computed, write_logs

dd = pytest.importorskip("dask.dataframe")


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows by message and arrival: pandas keeps the logs' order, a Dask frame groups rows by id
    (a shuffle on the id drops repeats across logs), so the rows are the same in another order."""
    return frame.sort_values(["id", "received_at"], kind="stable").reset_index(drop=True)


def _as_dask_holds(frame: pd.DataFrame) -> pd.DataFrame:
    """A pandas read as the Dask reader types it: ``sender`` and ``mnc`` are categoricals of the values read in
    pandas, text in Dask (a Dask frame's meta must know its categories before the logs are read)."""
    assert all(isinstance(frame[column].dtype, pd.CategoricalDtype) for column in ("sender", "mnc"))
    return frame.astype({"sender": "string", "mnc": "string"})


def test_a_folder_of_mixed_logs_is_read_once_per_notification(tmp_path):
    paths, url = write_logs(tmp_path / "logs")
    together = sendframe.read_callbacks(tmp_path / "logs", url)
    one_by_one = [sendframe.read_callbacks(p) if "receiver" in p.name else sendframe.read_callbacks(p, url)
                  for p in paths]
    assert len(together) == 300 and together["id"].is_unique  # 39 retries seen again in receiver-b are dropped
    assert together.attrs["duplicates_dropped"] == 39 and together.attrs["files"] == 3
    assert sum(len(f) for f in one_by_one) == 339
    assert set(together.columns) >= {"id", "status", "ref", "received_at"}
    # the same notification in two logs is kept at its earliest arrival
    again = together.set_index("id").loc["m00001", "received_at"]
    assert again == pd.Timestamp("2026-11-21 10:01:01", tz="UTC")
    listed = sendframe.read_callbacks([str(p) for p in paths], url)  # in the order given
    pd.testing.assert_frame_equal(_ordered(listed), _ordered(together))


def test_dask_callbacks_latest_status_and_summary_equal_pandas(dask_client, tmp_path):
    paths, url = write_logs(tmp_path / "logs")
    expected = sendframe.read_callbacks(str(tmp_path / "logs" / "*"), url)
    lazy = sendframe.read_callbacks(str(tmp_path / "logs" / "*"), url, dask=True)
    pd.testing.assert_frame_equal(_ordered(computed(lazy)), _ordered(_as_dask_holds(expected)))
    # one row per message and part, grouped by id on the partitions (a shuffle): sorted as pandas sorts them
    latest = computed(latest_status(lazy)).sort_values(["id", "part"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(latest, _as_dask_holds(latest_status(expected)))
    for by in ("campaign_id", ("country", "mnc"), "send_hour"):
        want = sendframe.delivery_summary(callbacks=expected, by=by)
        got = sendframe.delivery_summary(callbacks=lazy, by=by)
        pd.testing.assert_frame_equal(got, want)
    assert want["seconds_to_delivery_p50"].notna().any()


def test_summary_of_dask_results_with_callbacks_equals_pandas(dask_client, tmp_path):
    paths, url = write_logs(tmp_path / "logs")
    callbacks = sendframe.read_callbacks(tmp_path / "logs", url)
    ids = [f"m{i:05d}" for i in range(0, 320)]  # some were never reported, some rejected
    results = pd.DataFrame({"id": pd.array(ids, dtype="string"),
                            "accepted": [i % 17 != 0 for i in range(320)],
                            "outcome": ["rejected" if i % 17 == 0 else "accepted" for i in range(320)],
                            "campaign_id": pd.array([1 + i % 2 for i in range(320)], dtype="Int64")})
    want = sendframe.delivery_summary(results, callbacks, by="campaign_id")
    got = sendframe.delivery_summary(dd.from_pandas(results, npartitions=3), dd.from_pandas(callbacks, npartitions=2),
                                     by="campaign_id")
    pd.testing.assert_frame_equal(got, want)
    outcomes = message_outcomes(dd.from_pandas(results, npartitions=3),
                                          dd.from_pandas(callbacks, npartitions=2))
    # rows come back grouped by message id (a shuffle on the id), each on its label in results: sorted back
    pd.testing.assert_frame_equal(computed(outcomes).sort_index(), message_outcomes(results, callbacks))
    alone = message_outcomes(dd.from_pandas(results, npartitions=3))
    pd.testing.assert_frame_equal(computed(alone).sort_index(), message_outcomes(results))
    # pandas frames given with a Dask one are taken with their own dtypes (not turned into string[pyarrow])
    got = sendframe.delivery_summary(results, dd.from_pandas(callbacks, npartitions=2), by="campaign_id")
    pd.testing.assert_frame_equal(got, want)


def test_big_logs_are_read_in_line_ranges_with_answers_equal_to_pandas(dask_client, tmp_path):
    paths, url = write_logs(tmp_path / "logs", messages=3000)
    # the receiver log's #params line comes back after a restart in its middle, naming a new own parameter
    first = paths[0]
    lines = first.read_text().splitlines(keepends=True)
    restart = HEADER.replace("&ref=crm", "&ref=crm&shop=es")
    first.write_text("".join([*lines[:1500], restart, *(line.replace("&ref=crm", "&ref=crm&shop=es")
                                                          for line in lines[1500:])]))
    expected = sendframe.read_callbacks(tmp_path / "logs", url)
    lazy = read_logs(sendframe.read_callbacks, tmp_path / "logs", url, blocksize=40_000)
    # several ranges per plain log, the gzip log whole
    plain = sum(p.stat().st_size for p in paths if p.suffix == ".log")
    assert lazy.npartitions >= plain // 40_000 and expected["shop"].eq("es").sum() > 500
    pd.testing.assert_frame_equal(_ordered(computed(lazy)), _ordered(_as_dask_holds(expected)))
    for by in ("campaign_id", ("country", "mnc")):
        want = sendframe.delivery_summary(callbacks=expected, by=by)
        pd.testing.assert_frame_equal(sendframe.delivery_summary(callbacks=lazy, by=by), want)


def test_a_retry_split_across_two_ranges_of_one_log_is_kept_once(dask_client, tmp_path):
    paths, url = write_logs(tmp_path / "logs", messages=400)
    first = paths[0]
    text = first.read_text()
    retries = text.splitlines(keepends=True)[1:6]
    first.write_text(text + "".join(line.replace("T10:", "T12:") for line in retries))  # far from the originals
    expected = sendframe.read_callbacks([str(first)])
    lazy = read_logs(sendframe.read_callbacks, [str(first)], blocksize=5_000)
    got = _ordered(computed(lazy))
    assert lazy.npartitions > 5 and got["id"].is_unique and len(got) == len(expected)
    pd.testing.assert_frame_equal(got, _ordered(_as_dask_holds(expected)))


def test_dask_summary_has_the_pandas_rates_intervals_percentiles_and_costs_exactly(dask_client):
    n = 90
    ids = [f"m{i:03d}" for i in range(n)]
    sent = pd.Timestamp("2026-11-21 10:00", tz="UTC")
    seconds = (np.arange(n) * 7) % 23  # 0 to 22 s: some within 5 s, most not
    phones = [f"3460000{i:04d}" for i in range(n)]
    results = pd.DataFrame({"id": pd.array([None if i % 11 == 0 else x for i, x in enumerate(ids)], dtype="string"),
                            "accepted": [i % 11 != 0 for i in range(n)],
                            "outcome": ["rejected" if i % 11 == 0 else "accepted" for i in range(n)],
                            "campaign_id": pd.array(1 + np.arange(n) % 2, dtype="Int64"), "recipient": phones})
    callbacks = pd.DataFrame({"id": ids, "part": 1, "status": np.where(np.arange(n) % 7 == 0, "UNDELIV", "DELIVRD"),
                              "mnc": [("01", "03", "04")[i % 3] for i in range(n)],
                              "cost": 0.05 + 0.01 * (np.arange(n) % 2),
                              "recipient": phones, "campaign_id": 1 + np.arange(n) % 2, "sending_id": 1,
                              "sent_at": sent, "reported_at": sent + pd.to_timedelta(seconds, unit="s")})
    by = ("campaign_id", "operator")
    want = sendframe.delivery_summary(results, callbacks, by=by)
    got = sendframe.delivery_summary(dd.from_pandas(results, npartitions=3), dd.from_pandas(callbacks, npartitions=2),
                                     by=by)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert want.index.names == ["campaign_id", "operator"]
    delivered = want[want["delivered"] > 0]  # the rejected rows are a group of their own ("ES ?")
    assert len(delivered) == 6 and want.loc[(1, "ES ?"), "accepted"] == 0
    within = delivered["delivered_within_5s"].astype(float)
    assert ((within > 0) & (within < 1)).all() and delivered["seconds_to_delivery_p99"].notna().all()
    assert (delivered["delivery_rate_low"] < delivered["delivery_rate"]).all()
    assert delivered["cost_per_delivered"].notna().all()


def test_a_dask_outcome_table_counts_its_unsubscribes_and_clicks_as_pandas(dask_client):
    results, callbacks, records, _ = campaign()
    gone = pd.DataFrame({"id": ["m1", "m4"], "type": "unsubscribed", "date": T0 + pd.Timedelta(minutes=5)})
    records = Records(records.messages, pd.concat([records.events, gone], ignore_index=True), [])
    table = message_outcomes(results, callbacks, records)
    want = sendframe.delivery_summary(table)
    got = sendframe.delivery_summary(dd.from_pandas(table, npartitions=3))
    assert want.iloc[0]["unsubscribes"] == 2 and want.iloc[0]["clicks"] > 0
    pd.testing.assert_frame_equal(got, want, check_exact=True)
