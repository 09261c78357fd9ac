"""assign_variants: a recipient's group depends on (seed, normalised recipient) only."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import sendframe
from sendframe.campaign.experiment import (
    assign_variants,
    recipient_uniforms,
    variant_weights,
)
from sendframe.errors import InputError, UnknownOptionError

WEIGHTS = {"A": 0.45, "B": 0.45, "holdout": 0.1}


def _contacts(n: int, start: int = 0) -> pd.DataFrame:
    return pd.DataFrame({"phone": [f"34600{i:06d}" for i in range(start, start + n)], "name": "Ana"})


def test_reordering_the_table_moves_nobody():
    contacts = _contacts(2_000)
    before = assign_variants(contacts, WEIGHTS, seed=11)
    shuffled = assign_variants(contacts.sample(frac=1.0, random_state=3), WEIGHTS, seed=11)
    assert shuffled["variant"].reindex(before.index).equals(before["variant"])


def test_a_re_export_with_numbers_typed_differently_and_new_labels_moves_nobody():
    contacts = _contacts(500)
    before = assign_variants(contacts, WEIGHTS, seed=11).set_index("phone")["variant"]
    spelled = contacts["phone"].str.replace(r"^34(\d{3})(\d{3})(\d{3})$", r"+34 \1 \2 \3", regex=True)
    spelled[::2] = contacts["phone"][::2].str[2:]  # national form, region ES
    exported = pd.DataFrame({"Mobile": spelled.to_numpy(), "key": contacts["phone"].to_numpy()},
                            index=pd.RangeIndex(1000, 1500))
    after = assign_variants(exported, WEIGHTS, seed=11).set_index("key")["variant"]
    assert (after.reindex(before.index) == before).all()


def test_a_subset_of_the_table_keeps_each_recipient_group():
    contacts = _contacts(1_000)
    full = assign_variants(contacts, WEIGHTS, seed=5)["variant"]
    part = assign_variants(contacts.iloc[300:600], WEIGHTS, seed=5)["variant"]
    assert part.equals(full.iloc[300:600])


def test_emails_are_compared_trimmed_and_case_insensitively():
    frame = pd.DataFrame({"E-mail": ["Ana@Example.com ", "bo@example.com", None]})
    again = pd.DataFrame({"email": ["ana@example.com", " BO@example.com", "x@example.com"]})
    first = assign_variants(frame, ["A", "B", "C", "D"], seed=2)["variant"]
    second = assign_variants(again, ["A", "B", "C", "D"], seed=2)["variant"]
    assert first.iloc[:2].tolist() == second.iloc[:2].tolist()
    assert pd.isna(first.iloc[2])


def test_the_hash_is_keyed_blake2b_of_seed_and_recipient_written_out():
    digest = hashlib.blake2b(b"34600000001", digest_size=8, key=b"7").digest()
    expected = (int.from_bytes(digest, "big") >> 11) * 2.0 ** -53
    assert recipient_uniforms(pd.Series(["34600000001"]), seed=7)[0] == expected


def test_proportions_on_100k_rows_are_within_tolerance_and_the_holdout_is_there():
    contacts = _contacts(100_000)
    split = assign_variants(contacts, WEIGHTS, seed=2026)
    shares = split["variant"].value_counts(normalize=True)
    for name, weight in WEIGHTS.items():
        # 4 standard errors of a share on 100k rows: at most 0.0064 for 0.45, 0.0038 for 0.1
        assert abs(shares[name] - weight) < 4 * np.sqrt(weight * (1 - weight) / 100_000), (name, shares[name])
    assert split["variant"].isna().sum() == 0
    assert split.attrs["sendframe.variants"]["holdout"] == "holdout"


def test_another_seed_gives_an_independent_split():
    contacts = _contacts(20_000)
    first = assign_variants(contacts, ["A", "B"], seed=1)["variant"]
    second = assign_variants(contacts, ["A", "B"], seed=2)["variant"]
    agreement = float((first == second).mean())
    assert 0.48 < agreement < 0.52


def test_variant_is_an_ordered_categorical_in_the_order_of_the_weights_and_input_is_untouched():
    contacts = _contacts(50)
    original = contacts.copy()
    split = assign_variants(contacts, {"control": 1, "treatment": 1, "holdout": 0}, column="arm")
    assert isinstance(split["arm"].dtype, pd.CategoricalDtype) and split["arm"].cat.ordered
    assert split["arm"].cat.categories.tolist() == ["control", "treatment", "holdout"]
    assert (split["arm"] == "holdout").sum() == 0  # zero weight: the group exists, nobody is in it
    pd.testing.assert_frame_equal(contacts, original)
    assert "arm" not in contacts


def test_rows_without_a_usable_phone_get_no_variant():
    contacts = pd.DataFrame({"phone": ["600000001", "not a phone", None]})
    assert assign_variants(contacts, ["A", "B"])["variant"].isna().tolist() == [False, True, True]


def test_holdout_default_explicit_and_none():
    contacts = _contacts(10)
    assert assign_variants(contacts, ["A", "B"]).attrs["sendframe.variants"]["holdout"] is None
    named = assign_variants(contacts, {"A": 1, "control": 1}, holdout="control")
    assert named.attrs["sendframe.variants"]["holdout"] == "control"
    assert assign_variants(contacts, WEIGHTS, holdout=None).attrs["sendframe.variants"]["holdout"] is None
    with pytest.raises(InputError, match="holdout='rest' is not one of the variants"):
        assign_variants(contacts, WEIGHTS, holdout="rest")


def test_an_unknown_keyword_is_refused_with_the_closest_one():
    with pytest.raises(UnknownOptionError, match="'seeds'. Did you mean 'seed'"):
        assign_variants(_contacts(3), WEIGHTS, seeds=3)


@pytest.mark.parametrize("weights, message", [
    ({}, "names no variant"),
    ({"A": -1, "B": 2}, "weight of variant 'A' must be a number >= 0"),
    ({"A": 0, "B": 0}, "add up to 0"),
    ({"A": float("nan")}, "weight of variant 'A'"),
    ("AB", "must map each variant name"),
])
def test_bad_weights_are_refused_in_plain_english(weights, message):
    with pytest.raises(InputError, match=message):
        variant_weights(weights)


def test_a_table_without_a_recipient_column_names_its_columns():
    with pytest.raises(InputError, match="columns are: name"):
        assign_variants(pd.DataFrame({"name": ["Ana"]}), WEIGHTS)


def test_assign_variants_is_exported_at_the_top_level():
    assert sendframe.assign_variants is assign_variants


def test_an_arrow_table_is_split_as_its_pandas_frame_is():
    contacts = _contacts(100)
    from_arrow = assign_variants(pa.Table.from_pandas(contacts, preserve_index=False), WEIGHTS, seed=3)
    assert from_arrow["variant"].tolist() == assign_variants(contacts, WEIGHTS, seed=3)["variant"].tolist()
