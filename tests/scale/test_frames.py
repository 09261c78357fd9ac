"""estimate, preflight and a Message on a Dask frame answer exactly what pandas answers on the same rows."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import sendframe
from sendframe.scale.messages import problem_counts
from sendframe.scale.partitions import from_pandas
from tests.scale.data import computed, contacts, typed

dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def table():
    frame = sendframe.read_contacts(contacts())
    return frame, dd.from_pandas(frame, npartitions=5, sort=False)


def test_estimate_of_a_dask_frame_is_lazy_and_equals_pandas_with_the_same_totals(dask_client, table):
    frame, ddf = table
    msg = sendframe.sms("Hi {name}, {amount|formatDotComma}", sender="Shop", encoding="auto", parts=1)
    lazy = msg.estimate(ddf)
    assert lazy.npartitions == 5 and list(lazy.columns) == list(
        sendframe.sms("Hi {name}", sender="Shop").estimate(frame.iloc[:0]).columns)
    expected = msg.estimate(frame)
    pd.testing.assert_frame_equal(computed(lazy), expected)
    assert typed(sendframe.estimate_totals(lazy)) == typed(expected.attrs["totals"])


def test_preflight_finds_repeats_across_partitions_exactly_as_pandas(dask_client, table):
    frame, ddf = table
    msg = sendframe.sms("Hi {name} {amount|formatDotComma}", sender="Shop")
    expected = msg.preflight(frame)
    lazy = msg.preflight(ddf)
    found = computed(lazy)
    repeats = expected[expected["rule"] == "duplicate_recipient"]
    # the repeats span partitions: a later row names a first occurrence several partitions back
    first_rows = repeats["message"].str.extract(r"in row (\d+)")[0].astype(int)
    assert ((repeats["row"].astype(int) - first_rows) > len(frame) // 5).any()
    # each partition numbers its problems from 0: the index is made 0, 1, ... as pandas' (order and rows kept)
    pd.testing.assert_frame_equal(found.reset_index(drop=True), expected)
    counts = problem_counts(lazy)  # a Dask reduction
    pd.testing.assert_frame_equal(counts, problem_counts(expected))
    assert counts.set_index("rule")["problems"]["duplicate_recipient"] == len(repeats)


def test_a_message_plans_estimates_and_previews_a_dask_frame_as_pandas(dask_client, table):
    frame, ddf = table
    msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto", parts=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("plan", "preview", "estimate"):
            pd.testing.assert_frame_equal(computed(getattr(msg, method)(ddf)), getattr(msg, method)(frame))
        # each partition numbers its problems from 0: the index is made 0, 1, ... as pandas' (order kept)
        pd.testing.assert_frame_equal(computed(msg.preflight(ddf)).reset_index(drop=True), msg.preflight(frame))
        # ready answers the input's own rows, typed as the input is: Dask's from_pandas stored the str
        # columns of ``frame`` as string[pyarrow] (its dataframe.convert-string), so the rows pandas
        # answers are compared in the Dask frame's dtypes; built with pandas' dtypes, they are pandas' own
        pd.testing.assert_frame_equal(computed(msg.ready(ddf)), msg.ready(frame).astype(ddf.dtypes.to_dict()))
        pd.testing.assert_frame_equal(computed(msg.ready(from_pandas(frame, npartitions=5))), msg.ready(frame))
        pd.testing.assert_series_equal(computed(msg.render(ddf)), msg.render(frame))
        assert typed(sendframe.estimate_totals(msg.estimate(ddf))) == typed(msg.estimate(frame).attrs["totals"])
        kept = msg.plan(ddf, keep="duplicate").compute()
    assert "skipped_duplicate" not in set(kept["action"])
    assert (msg.plan(frame)["action"] == "skipped_duplicate").sum() > 20


def test_prepare_and_schedule_of_a_dask_frame_prepare_each_partition_once_and_answer_as_pandas(dask_client, table):
    frame, ddf = table
    msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto", local_time="10:00")
    now = "2026-11-24T12:00:00+00:00"
    lazy = msg.prepare(ddf, now=now).frame
    keys = {key[0] if isinstance(key, tuple) else key for key in dict(lazy.__dask_graph__())}
    assert sum(str(key).startswith("prepare-") for key in keys) == ddf.npartitions  # one graph, each partition once
    expected = msg.prepare(frame, now=now).frame
    assert (expected["action"] == "skipped_duplicate").sum() > 20  # repeats across partitions are settled
    pd.testing.assert_frame_equal(computed(lazy), expected)
    pd.testing.assert_frame_equal(computed(msg.schedule(ddf, now=now)), msg.schedule(frame, now=now))


def test_read_contacts_reads_a_csv_glob_and_a_parquet_dataset_as_the_pandas_reader(dask_client, tmp_path):
    raw = contacts()
    for i in range(4):
        raw.iloc[i * 100:(i + 1) * 100].to_csv(tmp_path / f"c{i}.csv", index=False)
        (tmp_path / "pq").mkdir(exist_ok=True)
        raw.iloc[i * 100:(i + 1) * 100].to_parquet(tmp_path / "pq" / f"part{i}.parquet", index=False)
    expected = sendframe.read_contacts(raw)
    for source in (str(tmp_path / "c*.csv"), tmp_path / "pq"):
        lazy = sendframe.read_contacts(source)
        assert lazy.npartitions == 4 and lazy.divisions == (0, 100, 200, 300, 399)
        pd.testing.assert_frame_equal(computed(lazy), expected)
    assert expected["duplicate"].sum() > 100  # repeats across files are flagged, not only within one


def test_a_missing_recipient_column_is_said_at_once_not_at_compute(dask_client, table):
    _, ddf = table
    with pytest.raises(sendframe.InputError, match="no phone column"):
        sendframe.sms("Hi", sender="Shop").estimate(ddf.drop(columns=["phone", "phone_raw"]))


def test_read_contacts_flags_repeats_across_files_whose_recipient_columns_have_other_names(dask_client, tmp_path):
    raw = contacts().rename(columns={"phone": "Mobile", "email": "E-mail"})
    for i in range(4):
        raw.iloc[i * 100:(i + 1) * 100].to_csv(tmp_path / f"c{i}.csv", index=False)
    expected = sendframe.read_contacts(raw)
    assert expected.attrs["recipient_columns"] == {"phone": "Mobile", "email": "E-mail"}
    # found under their usual names, and named exactly: both read the renamed columns as pandas does
    for options in ({}, {"phone_column": "Mobile", "email_column": "E-mail"}, {"phone_column": "Mobile",
                                                                              "email_column": None}):
        lazy = sendframe.read_contacts(str(tmp_path / "c*.csv"), **options)
        found = computed(lazy)
        wanted = sendframe.read_contacts(raw, **options)
        pd.testing.assert_frame_equal(found, wanted)
        assert found["duplicate"].sum() > 100  # repeats in other files are flagged, by the canonical phone column


def test_read_contacts_takes_names_and_the_country_column_on_dask_as_in_pandas(dask_client, tmp_path):
    raw = pd.DataFrame({"Mobile Phone Number": ["612 345 678", "912 345 678", "07400 123456", "600 111 222"] * 25,
                        "First Name": ["Ana", "Bo", "Cy", "Di"] * 25, "CC": ["ES", "PT", "GB", None] * 25})
    raw.iloc[:50].to_csv(tmp_path / "c0.csv", index=False)
    raw.iloc[50:].to_csv(tmp_path / "c1.csv", index=False)
    expected = sendframe.read_contacts(raw, names="snake")
    lazy = sendframe.read_contacts(str(tmp_path / "c*.csv"), names="snake")
    pd.testing.assert_frame_equal(computed(lazy), expected)
    assert {"first_name", "cc"} <= set(expected.columns) and expected["phone"].iloc[2] == "447400123456"
