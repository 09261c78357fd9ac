"""One campaign, one ledger, a different message per variant, and a holdout group that is never sent.

:class:`Variants` maps each value of the contacts' ``variant`` column (see
:func:`sendframe.assign_variants`) to a :class:`~sendframe.Message`; rows of a holdout group get the
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

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sendframe.campaign.batching import IDENTITY_FIELDS
from sendframe.campaign.budget import Budget
from sendframe.campaign.estimate import estimate_totals
from sendframe.campaign.message import Message
from sendframe.campaign.policy import keep_reasons, repeat_reasons, repeated_rows, warn_skipped
from sendframe.campaign.prepared import Prepared
from sendframe.campaign.send_options import SendOptions, send_signature
from sendframe.campaign.send_prepared import send_prepared
from sendframe.campaign.tables import as_frame
from sendframe.campaign.variants import HOLDOUT
from sendframe.errors import InputError
from sendframe.options import keyword_checked
from sendframe.send_outcomes import OUTCOMES

__all__ = ["Variants", "variants"]



@dataclass(frozen=True)
class Variants:
    """A message per variant of the contacts' ``column``; rows of ``holdout`` groups are never sent."""

    messages: Mapping[str, Message]
    column: str = "variant"
    holdout: tuple[str, ...] = (HOLDOUT,)

    def _groups(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        if self.column not in frame.columns:
            raise InputError(f"The contacts have no {self.column!r} column: add one with sendframe.assign_variants "
                             f"(or name yours with column=).")
        values = frame[self.column].astype("str")
        known = set(self.messages) | set(self.holdout)
        unknown = sorted(set(values.dropna()) - known)
        if unknown:
            raise InputError(f"Column {self.column!r} holds {', '.join(map(repr, unknown))}, which has no message "
                             f"(variants: {', '.join(self.messages)}; holdout: {', '.join(self.holdout)}).")
        return {name: (values == name).to_numpy() for name in [*self.messages, *self.holdout]}

    def _identity(self) -> dict[str, Any]:
        return {f"variant {name}": json.dumps({"channel": msg.channel, **{k: msg.fields[k] for k in IDENTITY_FIELDS
                                                                          if k in msg.fields}}, ensure_ascii=False)
                for name, msg in self.messages.items()}

    @keyword_checked
    def render(self, contacts: Any) -> pd.Series:
        """Each row's text under its variant's message (holdout rows: <NA>)."""
        frame = as_frame(contacts)
        text = pd.Series(pd.NA, index=frame.index, dtype="str", name="text")
        for name, rows in self._groups(frame).items():
            if name in self.messages and rows.any():
                text[rows] = self.messages[name].render(frame.loc[rows])
        return text

    @keyword_checked
    def preflight(self, contacts: Any, *, suppression: Any = None) -> pd.DataFrame:
        """Every problem per variant, one row each, with a ``variant`` column (holdout rows are not checked)."""
        frame = as_frame(contacts)
        found = [self.messages[name].preflight(frame.loc[rows], suppression=suppression).assign(variant=name)
                 for name, rows in self._groups(frame).items() if name in self.messages]
        return pd.concat(found, ignore_index=True)

    def prepare(self, contacts: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None,
                now: Any = None, ledger: Any = None, prices: Any = None,
                attachments: int = 0) -> tuple[dict[str, Prepared], pd.DataFrame]:
        """Each variant's prepared frame (:meth:`Message.prepare <sendframe.Message.prepare>`) and the campaign's
        plan: ``action`` (``send``, ``holdout`` or a skipped outcome), ``reason`` and ``variant``. The prepared
        frames follow that plan: a recipient repeated across variants gets one message, its first row's."""
        frame = as_frame(contacts)
        reasons = keep_reasons(keep)
        plan = pd.DataFrame({"action": pd.Series("holdout", index=frame.index, dtype="str"),
                             "reason": pd.Series(pd.NA, index=frame.index, dtype="str")})
        keys = pd.Series(pd.NA, index=frame.index, dtype="str")
        prepared: dict[str, Prepared] = {}
        rows_of = {name: rows for name, rows in self._groups(frame).items() if name in self.messages and rows.any()}
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
            plan.loc[repeated, "action"] = "skipped_duplicate"
            plan.loc[repeated, "reason"] = repeat_reasons(keys[repeated])
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
        priced = pd.concat(pieces).reindex(frame.index) if pieces else pd.DataFrame(index=frame.index)
        # each piece follows the campaign's plan (skipped rows cost nothing); holdout rows have no piece
        priced = priced.assign(billable=priced["billable"].fillna(False).astype(bool), cost=priced["cost"].fillna(0.0),
                               action=plan["action"], variant=plan["variant"])
        currency = next((piece.attrs.get("currency") for piece in pieces), "EUR")
        priced.attrs = {"currency": currency}
        priced.attrs["totals"] = estimate_totals(priced)
        shown = ("rows", "billable", "messages", "cost")
        by_variant = {name: {k: v for k, v in estimate_totals(group).items() if k in shown}
                      for name, group in priced.groupby("variant", sort=False)}
        priced.attrs["by_variant"] = pd.DataFrame.from_dict(by_variant, orient="index").rename_axis("variant")
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
        results = [send_prepared(p, how, budget=budget, identity=self._identity(), warn=False)
                   for p in prepared.values()]
        result = pd.concat(results).reindex(frame.index) if results else pd.DataFrame(index=frame.index)
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
