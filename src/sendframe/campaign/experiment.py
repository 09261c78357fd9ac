"""A/B tests: contacts split into variants that never move, and one campaign sending a message per variant.

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

:class:`Variants` maps each value of the contacts' ``variant`` column (see
:func:`assign_variants`) to a :class:`~sendframe.Message`; rows of a holdout group get the
outcome ``holdout``. It has the methods of a message (render, preflight, plan, estimate, send), so
everything is checked and priced per variant before anything is sent.

    >>> import pandas as pd, sendframe
    >>> contacts = pd.DataFrame({"phone": ["34600000001", "34600000002", "34600000003"],
    ...                          "name": ["Ana", "Bo", "Cy"], "variant": ["A", "B", "holdout"]})
    >>> test = sendframe.variants({"A": sendframe.sms("Hi {name}", sender="Shop"),
    ...                            "B": sendframe.sms("{name}, today only", sender="Shop")})
    >>> test.plan(contacts)["action"].tolist()
    ['send', 'send', 'holdout']
    >>> test.render(contacts).tolist()
    ['Hi Ana', 'Bo, today only', nan]
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import recipient_keys
from sendframe.campaign.batching import campaign_identity
from sendframe.campaign.columns import find_recipient_column, recipient_column
from sendframe.campaign.estimate import estimate_totals
from sendframe.campaign.message import Message
from sendframe.campaign.policy import keep_reasons, repeated_rows, skip_repeats, warn_skipped
from sendframe.campaign.prepared import Prepared
from sendframe.campaign.send import Budget, SendOptions, send_prepared, send_signature
from sendframe.campaign.tables import as_frame
from sendframe.delivery.outcomes import VARIANTS_ATTR
from sendframe.errors import InputError
from sendframe.options import keyword_checked
from sendframe.send_outcomes import OUTCOMES

__all__ = ["HOLDOUT", "Variants", "assign_variants", "recipient_uniforms", "variant_weights", "variants"]

HOLDOUT = "holdout"
"""The name of the group that is never sent, unless ``holdout=`` names another."""

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
        raise InputError("weights must map each variant name to its weight, e.g. {'A': 0.45, 'B': 0.45, "
                         f"'holdout': 0.1}}, or list the names for equal weights; got {weights!r}.")
    pairs = list(weights.items()) if isinstance(weights, Mapping) else [(name, 1.0) for name in weights]
    names = [name for name, _ in pairs]
    if not pairs:
        raise InputError("weights names no variant; give at least one, e.g. {'A': 0.5, 'B': 0.5}.")
    for name, weight in pairs:
        if not isinstance(name, str) or not name:
            raise InputError(f"Variant names must be non-empty text; got {name!r}.")
        number = isinstance(weight, (int, float, np.integer, np.floating)) and not isinstance(weight, bool)
        if not number or not 0 <= weight < math.inf:
            raise InputError(f"The weight of variant {name!r} must be a number >= 0; got {weight!r}.")
    if len(set(names)) != len(names):
        raise InputError(f"Variant names must be unique; got {names}.")
    total = math.fsum(weight for _, weight in pairs)
    if total <= 0:
        raise InputError("The weights add up to 0; give at least one variant a positive weight.")
    return {name: float(weight) / total for name, weight in pairs}


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
    digests = b"".join(hashlib.blake2b(str(value).encode(), digest_size=8, key=key).digest() for value in uniques)
    # the top 53 bits as a double: exactly uniform over [0, 1), never 1.0
    uniform = np.append((np.frombuffer(digests, dtype=">u8") >> np.uint64(11)).astype(np.float64) * 2.0**-53, np.nan)
    return uniform[codes]  # code -1 (missing) takes the NaN appended last


@keyword_checked
def assign_variants(
    contacts: Any,
    weights: Mapping[str, float] | Sequence[str],
    *,
    seed: int | str = 0,
    column: str = "variant",
    recipient: str | None = None,
    holdout: str | None = _UNSET,
    default_region: str = "ES",
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
    frame: pd.DataFrame = as_frame(contacts)
    if isinstance(seed, bool) or not isinstance(seed, (int, str, np.integer)):
        raise InputError(f"seed must be an int or text, e.g. seed=2026; got {seed!r}.")
    shares = variant_weights(weights)
    if holdout is _UNSET:
        holdout = HOLDOUT if HOLDOUT in shares else None
    elif holdout is not None and holdout not in shares:
        raise InputError(f"holdout={holdout!r} is not one of the variants {list(shares)}; "
                         "add it to weights or pass holdout=None.")
    if not isinstance(column, str) or not column:
        raise InputError(f"column must be a column name; got {column!r}.")

    found = find_recipient_column(frame, "phone") or find_recipient_column(frame, "email")
    source = (found if recipient is None else None) or recipient_column(frame, "phone", recipient)  # raises if none
    kinds = [kind for kind in ("phone", "email") if find_recipient_column(frame[[source]], kind) is not None]
    keys = recipient_keys(frame[source], kinds[0] if kinds else "any", default_region=default_region)

    uniform = recipient_uniforms(keys, seed)
    share_values = np.array(list(shares.values()), dtype=np.float64)
    edges = np.cumsum(share_values)  # the upper edge of each bucket
    edges[np.flatnonzero(share_values)[-1]:] = np.inf  # rounding never puts anyone in a trailing zero-weight group
    bucket = np.where(np.isnan(uniform), -1, np.searchsorted(edges, uniform, side="right"))  # -1: no recipient
    variant = pd.Categorical.from_codes(bucket.astype(np.int64), categories=pd.Index(list(shares)), ordered=True)

    out = frame.assign(**{column: variant})  # a copy, its attrs too
    out.attrs[VARIANTS_ATTR] = {"column": column, "weights": shares,
                                "seed": seed if isinstance(seed, str) else int(seed),
                                "holdout": holdout, "recipient": source}
    return out


@dataclass(frozen=True)
class Variants:
    """A message per variant of the contacts' ``column``; rows of ``holdout`` groups are never sent."""

    messages: Mapping[str, Message]
    column: str = "variant"
    holdout: tuple[str, ...] = (HOLDOUT,)

    def _groups(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """Which rows each variant with a message has (the rest are holdout rows); a value of neither is refused."""
        if self.column not in frame.columns:
            raise InputError(f"The contacts have no {self.column!r} column: add one with sendframe.assign_variants "
                             f"(or name yours with column=).")
        values = frame[self.column].astype("str")
        unknown = sorted(set(values.dropna()) - set(self.messages) - set(self.holdout))
        if unknown:
            raise InputError(f"Column {self.column!r} holds {', '.join(map(repr, unknown))}, which has no message "
                             f"(variants: {', '.join(self.messages)}; holdout: {', '.join(self.holdout)}).")
        return {name: (values == name).to_numpy() for name in self.messages}

    @keyword_checked
    def render(self, contacts: Any) -> pd.Series:
        """Each row's text under its variant's message (holdout rows: <NA>)."""
        frame = as_frame(contacts)
        text = pd.Series(pd.NA, index=frame.index, dtype="str", name="text")
        for name, rows in self._groups(frame).items():
            if rows.any():
                text[rows] = self.messages[name].render(frame.loc[rows])
        return text

    @keyword_checked
    def preflight(self, contacts: Any, *, suppression: Any = None) -> pd.DataFrame:
        """Every problem per variant, one row each, with a ``variant`` column (holdout rows are not checked)."""
        frame = as_frame(contacts)
        found = [self.messages[name].preflight(frame.loc[rows], suppression=suppression).assign(variant=name)
                 for name, rows in self._groups(frame).items()]
        return pd.concat(found, ignore_index=True)

    def prepare(self, contacts: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None,
                now: Any = None, ledger: Any = None, prices: Any = None,
                attachments: int = 0) -> tuple[dict[str, Prepared], pd.DataFrame]:
        """Each variant's prepared frame (:meth:`Message.prepare <sendframe.Message.prepare>`) and the campaign's
        plan: ``action`` (``send``, ``holdout`` or a skipped outcome), ``reason`` and ``variant``. The prepared
        frames follow that plan: a recipient repeated across variants gets one message, its first row's."""
        frame = as_frame(contacts)
        reasons = keep_reasons(keep)
        plan = pd.DataFrame({"action": "holdout", "reason": None}, index=frame.index, dtype="str")
        keys = pd.Series(pd.NA, index=frame.index, dtype="str")
        prepared: dict[str, Prepared] = {}
        rows_of = self._groups(frame)  # every variant, even one without rows: its empty piece gives the columns
        for name, rows in rows_of.items():
            message = self.messages[name]
            prepared[name] = message.prepare(frame.loc[rows], suppression=suppression, keep=reasons | {"duplicate"},
                                             now=now, ledger=ledger, prices=prices, attachments=attachments)
            plan.loc[rows, ["action", "reason"]] = prepared[name].plan.to_numpy()
            keys[rows] = prepared[name].recipient_key.to_numpy()
        unassigned = frame[self.column].isna().to_numpy()  # assign_variants found no usable recipient
        plan.loc[unassigned, "action"] = "skipped_invalid"
        plan.loc[unassigned, "reason"] = "no variant: the recipient is missing or not valid."
        if "duplicate" not in reasons:
            repeated = repeated_rows(keys, (plan["action"] == "send").to_numpy())
            plan = skip_repeats(plan, repeated, keys[repeated])
        plan = plan.assign(variant=frame[self.column].astype("str"))
        return {name: prepared[name].replanned(plan.loc[rows]) for name, rows in rows_of.items()}, plan

    @keyword_checked
    def plan(self, contacts: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None) -> pd.DataFrame:
        """Per row: ``action`` (``send``, ``holdout`` or a skipped outcome), ``reason`` and ``variant``.

        A recipient repeated across variants gets one message: its first row's.
        """
        return self.prepare(contacts, suppression=suppression, keep=keep)[1]

    @keyword_checked
    def estimate(self, contacts: Any, *, prices: Any = None, suppression: Any = None,
                 keep: str | Iterable[str] | None = None) -> pd.DataFrame:
        """Per row estimate under its variant's message; totals overall in ``.attrs["totals"]`` and per
        variant in ``.attrs["by_variant"]`` (a frame: rows, billable, messages, cost)."""
        frame = as_frame(contacts)
        prepared, plan = self.prepare(frame, suppression=suppression, keep=keep, prices=prices)
        pieces = [p.estimate for p in prepared.values()]
        priced = pd.concat(pieces).reindex(frame.index)
        # each piece follows the campaign's plan (skipped rows cost nothing); holdout rows have no piece
        priced = priced.assign(billable=priced["billable"].fillna(False).astype(bool), cost=priced["cost"].fillna(0.0),
                               action=plan["action"], variant=plan["variant"])
        priced.attrs = {"currency": next((p.attrs["currency"] for p in pieces if p.attrs.get("currency")), "EUR")}
        priced.attrs["totals"] = estimate_totals(priced)
        by_variant = {name: estimate_totals(group) for name, group in priced.groupby("variant", sort=False)}
        priced.attrs["by_variant"] = pd.DataFrame.from_dict(by_variant, orient="index")[
            ["rows", "billable", "messages", "cost"]].rename_axis("variant")
        return priced

    @send_signature
    def send(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """Send each variant's message to its rows through one ledger; holdout rows get outcome ``holdout``.

        Takes the options of :meth:`Message.send <sendframe.Message.send>`; ``max_cost`` caps the
        whole campaign (all variants together). The result has a ``variant`` column.

            >>> result = test.send(contacts, client=client, ledger="ab.sqlite", max_cost=50)  # doctest: +SKIP
        """
        how = SendOptions.of(options, "Variants.send")
        if how.out is not None:
            raise InputError("Variants.send takes a pandas frame and returns its result: out= is for a message's send "
                             "of a Dask frame (send each variant's rows with its message instead).")
        frame = as_frame(contacts)
        prepared, plan = self.prepare(frame, suppression=how.suppression, keep=how.keep, now=how.now,
                                      ledger=how.ledger, prices=how.prices)
        warn_skipped(plan, how.dry_run)
        budget = Budget(how.max_cost, []) if how.max_cost is not None else None
        identity = {f"variant {name}": json.dumps(campaign_identity(msg.channel, msg.fields), ensure_ascii=False)
                    for name, msg in self.messages.items()}  # what the ledger checks before resuming
        results = [send_prepared(p, how, budget=budget, identity=identity, warn=False) for p in prepared.values()]
        result = pd.concat(results).reindex(frame.index)
        held = (plan["action"] == "holdout").to_numpy()
        outcome = result["outcome"].astype("str").where(~held, "holdout")
        result = result.assign(outcome=pd.Categorical(outcome, categories=list(OUTCOMES)),
                               accepted=result["accepted"].mask(held, False), variant=plan["variant"])
        first = next(iter(self.messages.values()))
        return result.assign(recipient=result["recipient"].fillna(frame[first.recipient_column(frame)].astype("str")))


def variants(messages: Mapping[str, Message], *, column: str = "variant",
             holdout: str | Iterable[str] = HOLDOUT) -> Variants:
    """A :class:`Variants` campaign: ``variants({"A": msg_a, "B": msg_b})`` for the contacts' ``variant`` column.

        >>> import sendframe
        >>> sendframe.variants({"A": sendframe.sms("Hi", sender="Shop")}).holdout
        ('holdout',)
    """
    if not isinstance(messages, Mapping) or not messages:
        raise InputError("variants takes a mapping of variant name to message, e.g. {'A': sendframe.sms(...), "
                         "'B': sendframe.sms(...)}.")
    for name, message in messages.items():
        if not isinstance(message, Message):
            raise InputError(f"Variant {name!r} is {type(message).__name__}, not a message (make one with "
                             "sendframe.sms, sendframe.mailing, ...).")
    held = (holdout,) if isinstance(holdout, str) else tuple(holdout)
    overlap = set(messages) & set(held)
    if overlap:
        raise InputError(f"{', '.join(sorted(overlap))} is both a variant with a message and a holdout group.")
    return Variants(dict(messages), column, held)
