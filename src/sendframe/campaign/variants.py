"""Split a contact table into variants (A/B/... and a holdout) that never move.

A recipient's variant is a function of the seed and the *normalised* recipient only: a keyed
BLAKE2b hash of the recipient gives a number uniform in [0, 1), and the cumulative weights cut
that interval into one bucket per variant. So re-running, reordering, filtering or re-exporting
the table (the same phone typed ``+34 600 12 34 56`` or ``600123456``) never moves anyone; a
different seed gives an independent split.

    >>> import pandas as pd
    >>> contacts = pd.DataFrame({"phone": ["+34 600 000 001", "600000002", "34600000003", "600 000 004"]})
    >>> assign_variants(contacts, {"A": 0.5, "B": 0.5}, seed=4)["variant"].tolist()
    ['A', 'A', 'B', 'A']
    >>> assign_variants(contacts.iloc[::-1], {"A": 0.5, "B": 0.5}, seed=4)["variant"].tolist()
    ['A', 'B', 'A', 'A']
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import recipient_keys
from sendframe.campaign.columns import find_recipient_column, recipient_column
from sendframe.campaign.tables import as_frame
from sendframe.delivery.outcomes import VARIANTS_ATTR
from sendframe.errors import InputError
from sendframe.options import check_options

__all__ = ["HOLDOUT", "VARIANTS_ATTR", "assign_variants", "recipient_uniforms", "variant_weights"]

HOLDOUT = "holdout"
"""The name of the group that is never sent, unless ``holdout=`` names another."""

"""Key of ``frame.attrs`` where :func:`assign_variants` records column, weights, seed and holdout."""

_UNSET: Any = object()


def variant_weights(weights: Mapping[str, float] | Sequence[str]) -> dict[str, float]:
    """Check ``weights`` and return them as shares that add up to 1, in the given order.

    A sequence of names means equal weights. Weights are numbers >= 0 with a positive sum; a
    zero weight keeps the variant as a category that nobody is in.

        >>> variant_weights({"A": 45, "B": 45, "holdout": 10})
        {'A': 0.45, 'B': 0.45, 'holdout': 0.1}
        >>> variant_weights(["A", "B"])
        {'A': 0.5, 'B': 0.5}
    """
    if isinstance(weights, str) or not isinstance(weights, (Mapping, Sequence)):
        raise InputError("weights must map each variant name to its weight, "
                         "e.g. {'A': 0.45, 'B': 0.45, 'holdout': 0.1}, "
                         f"or list the names for equal weights; got {weights!r}.")
    pairs = list(weights.items()) if isinstance(weights, Mapping) else [(name, 1.0) for name in weights]
    if not pairs:
        raise InputError("weights names no variant; give at least one, e.g. {'A': 0.5, 'B': 0.5}.")
    names = [name for name, _ in pairs]
    for name in names:
        if not isinstance(name, str) or not name:
            raise InputError(f"Variant names must be non-empty text; got {name!r}.")
    if len(set(names)) != len(names):
        raise InputError(f"Variant names must be unique; got {names}.")
    values = []
    for name, weight in pairs:
        if isinstance(weight, bool) or not isinstance(weight, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(weight)) or weight < 0:
            raise InputError(f"The weight of variant {name!r} must be a number >= 0; got {weight!r}.")
        values.append(float(weight))
    total = math.fsum(values)
    if total <= 0:
        raise InputError("The weights add up to 0; give at least one variant a positive weight.")
    return {name: value / total for name, value in zip(names, values, strict=True)}


def recipient_uniforms(recipients: pd.Series, seed: int | str = 0) -> np.ndarray:
    """A number uniform in [0, 1) per recipient: keyed BLAKE2b of the recipient's text, once per distinct value.

    The key is the seed's text, so the same (seed, recipient) always gives the same number, on any
    machine and in any Python. Missing recipients give NaN.

        >>> recipient_uniforms(pd.Series(["34600000001", None, "34600000001"]), seed=7).round(6).tolist()
        [0.103734, nan, 0.103734]
    """
    key = str(seed).encode("utf-8")
    if len(key) > 64:
        raise InputError(f"seed must be at most 64 bytes of text; got {len(key)} bytes.")
    codes, uniques = pd.factorize(recipients, use_na_sentinel=True)
    start = hashlib.blake2b(digest_size=8, key=key)
    digests = []
    for value in uniques:
        hasher = start.copy()
        hasher.update(str(value).encode("utf-8"))
        digests.append(hasher.digest())
    hashes = np.frombuffer(b"".join(digests), dtype=">u8")
    # the top 53 bits as a double: exactly uniform over [0, 1), never 1.0
    uniform = np.append((hashes >> np.uint64(11)).astype(np.float64) * 2.0 ** -53, np.nan)
    return uniform[codes]  # code -1 (missing) takes the NaN appended last


def assign_variants(
    contacts: Any,
    weights: Mapping[str, float] | Sequence[str],
    *,
    seed: int | str = 0,
    column: str = "variant",
    recipient: str | None = None,
    holdout: str | None = _UNSET,
    default_region: str = "ES",
    **options: Any,
) -> pd.DataFrame:
    """A new frame with a ``variant`` column: each recipient's group, fixed by (seed, recipient).

    - ``weights``: variant name -> weight (normalised to shares), e.g. ``{"A": 0.45, "B": 0.45,
      "holdout": 0.1}``; a list of names means equal weights. ``variant`` is an ordered categorical
      of these names, in this order.
    - ``seed``: an int or text; another seed gives another, independent split.
    - ``contacts``: a pandas frame, or any frame that exports Arrow (polars, DuckDB, pyarrow).
    - ``recipient``: the column to hash; by default the phone column (``phone``, ``Mobile``, ...),
      else the email column. Recipients are compared by
      :func:`~sendframe.api.recipient_columns.recipient_keys` (phones as :func:`read_contacts` normalises
      them, ``default_region`` for national numbers; emails stripped and case-folded; a column named
      neither way by what each value is), so a re-exported table keeps everyone's group. Rows without a
      valid recipient get ``<NA>`` (they are not sent anyway).
    - ``holdout``: the group that is never sent; by default ``"holdout"`` when ``weights`` has it,
      else none. ``None`` says there is no holdout.

    An existing ``column`` is replaced. What was used is kept in ``frame.attrs["sendframe.variants"]``.
    The input is not modified.

        >>> import pandas as pd
        >>> contacts = pd.DataFrame({"Mobile": ["600000001", "600000002", "600000003", "600000004"]})
        >>> split = assign_variants(contacts, {"A": 45, "B": 45, "holdout": 10})
        >>> split["variant"].tolist(), split.attrs["sendframe.variants"]["holdout"]
        (['holdout', 'B', 'B', 'A'], 'holdout')
    """
    check_options(options, ["seed", "column", "recipient", "holdout", "default_region"], "sendframe.assign_variants")
    frame: pd.DataFrame = as_frame(contacts)
    if isinstance(seed, bool) or not isinstance(seed, (int, str, np.integer)):
        raise InputError(f"seed must be an int or text, e.g. seed=2026; got {seed!r}.")
    shares = variant_weights(weights)
    names = list(shares)
    if holdout is _UNSET:
        holdout = HOLDOUT if HOLDOUT in shares else None
    elif holdout is not None and holdout not in shares:
        raise InputError(f"holdout={holdout!r} is not one of the variants {names}; "
                         "add it to weights or pass holdout=None.")
    if not isinstance(column, str) or not column:
        raise InputError(f"column must be a column name; got {column!r}.")

    if recipient is None:
        found = find_recipient_column(frame, "phone") or find_recipient_column(frame, "email")
        source = found if found is not None else recipient_column(frame, "phone")  # raises, naming the columns
    else:
        source = recipient_column(frame, "phone", recipient)
    kinds = [kind for kind in ("phone", "email") if find_recipient_column(frame[[source]], kind) is not None]
    keys = recipient_keys(frame[source], kinds[0] if kinds else "any", default_region=default_region)

    uniform = recipient_uniforms(keys, seed)
    share_values = np.array(list(shares.values()), dtype=np.float64)
    bounds = np.cumsum(share_values)[:-1]  # upper edge of each bucket but the last
    bounds[np.flatnonzero(share_values)[-1]:] = np.inf  # rounding never puts anyone in a trailing zero-weight group
    bucket = np.searchsorted(bounds, np.nan_to_num(uniform, nan=0.0), side="right")
    bucket = np.where(np.isnan(uniform), -1, bucket)  # -1: no recipient, no variant
    variant = pd.Categorical.from_codes(bucket.astype(np.int64), categories=pd.Index(names), ordered=True)

    out = frame.copy()
    out[column] = pd.Series(variant, index=frame.index, name=column)
    out.attrs = dict(frame.attrs)
    out.attrs[VARIANTS_ATTR] = {"column": column, "weights": shares,
                                "seed": seed if isinstance(seed, str) else int(seed),
                                "holdout": holdout, "recipient": source}
    return out
