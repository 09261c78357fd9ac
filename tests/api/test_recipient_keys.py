"""recipient_keys: one rule for "the same recipient", the same over a column as recipient_key per value."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sendframe.api.recipient_columns import email_keys, recipient_keys, valid_emails
from sendframe.api.recipients import recipient_key
from sendframe.errors import InputError
from tests.api.test_recipient_columns import emails, messy_phone


def _listed(keys: pd.Series) -> list[object]:
    return [None if pd.isna(k) else k for k in keys.tolist()]


def test_a_phone_typed_several_ways_is_one_key():
    typed = ["+34 600 12 34 56", "0034 600-12-34-56", "600 123 456", "(+34) 600.123.456", "34600123456",
             34600123456.0, "34600123456.0", " +34600123456\t"]
    keys = recipient_keys(pd.Series(typed, dtype=object), "phone")
    assert set(keys) == {"34600123456"}
    assert [recipient_key(v, "phone") for v in typed] == ["34600123456"] * len(typed)


def test_a_national_number_takes_the_default_region():
    keys = recipient_keys(pd.Series(["07700 900123", "+44 7700 900123", "0044 7700 900123"]), "phone",
                          default_region="GB")
    assert keys.tolist() == ["447700900123"] * 3
    assert recipient_keys(pd.Series(["07700 900123"]), "phone").isna().all()  # not a Spanish number


def test_without_a_default_region_a_digit_run_is_already_in_api_form():
    # a ledger or an answer's "to": 672123456 is Norfolk Island, not the Spanish mobile 672 123 456
    assert recipient_keys(pd.Series(["672123456"]), "phone").tolist() == ["34672123456"]
    assert recipient_keys(pd.Series(["672123456", "+44 7700 900123"]), "phone", default_region=None).tolist() == [
        "672123456", "447700900123"]


def test_emails_with_spaces_and_case_are_one_key():
    typed = ["ana@example.com", " Ana@Example.COM", "ANA@EXAMPLE.COM\n", "\u00a0ana@example.com "]
    assert set(recipient_keys(pd.Series(typed), "email")) == {"ana@example.com"}
    assert recipient_keys(pd.Series(["STRASSE@beispiel.de", "straße@beispiel.de"]), "email").nunique() == 1


def test_what_is_no_valid_recipient_has_no_key():
    phones = recipient_keys(pd.Series(["nope", "123", "3.46001e+10", "", None, "ana@example.com"], dtype=object),
                            "phone")
    assert phones.isna().all()
    mails = recipient_keys(pd.Series(["ana@localhost", "a b@x.es", "@x.es", None, "34600123456"]), "email")
    assert mails.isna().all()


def test_any_keys_each_value_by_what_it_is():
    keys = recipient_keys(pd.Series([" Ana@X.es", "+34 600 12 34 56", "nope", None], index=[5, 6, 7, 8], name="to"),
                          "any")
    assert _listed(keys) == ["ana@x.es", "34600123456", None, None]
    assert keys.index.tolist() == [5, 6, 7, 8] and keys.name == "to"


def test_the_answer_is_an_arrow_backed_str_column_on_the_same_index_and_the_input_is_kept():
    values = pd.Series(["+34 600 12 34 56", None], index=["a", "b"], name="Mobile", dtype=object)
    before = values.copy()
    keys = recipient_keys(values, "phone")
    assert keys.dtype == "str" and keys.dtype.storage == "pyarrow"
    assert keys.index.tolist() == ["a", "b"] and keys.name == "Mobile"
    pd.testing.assert_series_equal(values, before)
    assert recipient_keys(pd.Series([], dtype="str"), "email").empty


def test_an_unknown_kind_is_an_error_naming_the_kinds():
    with pytest.raises(InputError, match="'phone', 'email', 'any'"):
        recipient_keys(pd.Series(["x"]), "mail")
    with pytest.raises(InputError, match="kind must be one of"):
        recipient_key("x", "sms")


recipients = st.one_of(messy_phone(), emails)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(recipients, max_size=30), kind=st.sampled_from(["phone", "email", "any"]),
       region=st.sampled_from(["ES", "GB", "US", "DE", "AR", None]), dtype=st.sampled_from([object, "str"]))
def test_the_column_rule_is_the_scalar_rule(values, kind, region, dtype):
    if dtype == "str":
        values = [v if v is None or isinstance(v, str) else str(v) for v in values]
    keys = recipient_keys(pd.Series(values, dtype=dtype), kind, default_region=region)
    assert _listed(keys) == [recipient_key(v, kind, default_region=region) for v in values]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(recipients, max_size=30), kind=st.sampled_from(["phone", "email", "any"]))
def test_a_key_is_its_own_key_in_api_form(values, kind):
    keys = recipient_keys(pd.Series(values, dtype=object), kind)
    again = recipient_keys(keys, kind, default_region=None)
    assert _listed(again) == _listed(keys)


# characters whose casefold is not their lower case (ß, ς, İ, ŉ, ﬁ, Cherokee), beside accented ones that agree,
# and one beyond the BMP
FOLDED_APART = ["Straße@Example.com", "ΣΟΦΊΑ.ς@example.gr", "İlker@example.tr", "ŉame@example.com",
                "ﬁnance@example.com", "ᏣᎳᎩ@example.com", "JOSÉ.Ñúñez@Example.ES", "JOÃO@exemplo.pt", "𐐀dam@example.com",
                "ana@example.com"]


def test_emails_are_case_folded_as_python_folds_them_even_where_lower_case_differs():
    keys = recipient_keys(pd.Series(FOLDED_APART, dtype="str"), "email")
    assert _listed(keys) == [recipient_key(v, "email") for v in FOLDED_APART]
    assert keys.tolist()[:2] == ["strasse@example.com", "σοφία.σ@example.gr"]


def test_email_keys_gives_the_keys_and_the_validity_together():
    values = pd.Series([" Ana@Example.com", "ana@localhost", None, "STRASSE@example.com"], dtype="str")
    keys, valid = email_keys(values)
    assert _listed(keys) == _listed(recipient_keys(values, "email"))
    assert valid.tolist() == valid_emails(values.str.strip()).tolist() == [True, False, False, True]
