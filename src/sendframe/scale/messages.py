"""A :class:`sendframe.Message` applied to a Dask frame: render, preview, preflight, plan, ready, estimate.

Each method of the message dispatches here (one line at its top) when given a Dask frame. The
message's own pandas method runs on every partition; the one rule that spans rows, a recipient
repeated in another partition (``skipped_duplicate``), is settled across partitions by
:func:`sendframe.scale.repeats.repeated_rows`: the rows a partition would send are the candidates,
and a candidate whose recipient an earlier candidate of the whole frame has is skipped, with the
policy's own words. The answers equal pandas' on the same rows.

    >>> msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto")  # doctest: +SKIP
    >>> plan = msg.plan(contacts_ddf)  # lazy  # doctest: +SKIP
    >>> plan["action"].value_counts().compute()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import recipient_keys
from sendframe.campaign.policy import keep_reasons, plan_rows
from sendframe.scale.frames import checked_preflight, on_partitions
from sendframe.scale.repeats import local_positions, repeated_rows
from sendframe.scale.runtime import meta_of, optimised, persist

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["RECIPIENT_KEY", "duplicate_reasons", "estimate", "plan", "preflight", "preview", "ready", "render",
           "repeats_of_plan", "with_duplicates", "with_key"]

RECIPIENT_KEY = "_recipient_key"
_NO_PROBLEMS = pd.DataFrame({"row": pd.Series([], dtype=object), "rule": pd.Series([], dtype="str"),
                             "message": pd.Series([], dtype="str"), "severity": pd.Series([], dtype="str")})


def with_duplicates(keep: str | Iterable[str] | None) -> list[str]:
    """``keep`` with ``"duplicate"`` added: the reasons a partition's own plan keeps.

        >>> with_duplicates("invalid")
        ['duplicate', 'invalid']
    """
    return sorted(keep_reasons(keep) | {"duplicate"})


def duplicate_reasons(keys: Iterable[Any]) -> np.ndarray:
    """The policy's reason for a row repeating each recipient key (``plan_rows``' own words).

        >>> duplicate_reasons(["34600123456"]).tolist()
        ['34600123456 already gets the message from an earlier row.']
    """
    keys = list(keys)
    distinct = list(dict.fromkeys(keys))
    n = len(distinct)
    if not n:
        return np.zeros(0, dtype=object)
    reasons = plan_rows(_NO_PROBLEMS, pd.RangeIndex(2 * n), pd.Series(distinct + distinct, dtype=object))["reason"]
    by_key = dict(zip(distinct, reasons.to_numpy(dtype=object)[n:], strict=True))
    return np.asarray([by_key[k] for k in keys], dtype=object)


def with_key(part: pd.DataFrame, method: Callable[..., pd.DataFrame], options: dict[str, Any],
             column: str, kind: str) -> pd.DataFrame:
    """``method(part, **options)`` with each row's recipient key (emails folded) in a hidden column.

        >>> with_key(pd.DataFrame({"email": ["A@b.co"]}), lambda p: p[[]], {}, "email", "email")[RECIPIENT_KEY].tolist()
        ['a@b.co']
    """
    out = method(part, **options)
    key = recipient_keys(part[column], kind, default_region=None)
    attrs = dict(out.attrs)
    out = out.assign(**{RECIPIENT_KEY: key.to_numpy(dtype=object)})
    out.attrs = attrs
    return out


def _sent_candidates(local: pd.DataFrame) -> pd.DataFrame:
    sending = (local["action"] == "send").to_numpy() & local[RECIPIENT_KEY].notna().to_numpy()
    return pd.DataFrame({"key": local[RECIPIENT_KEY].to_numpy(dtype=object)[sending], "label": local.index[sending]},
                        index=np.flatnonzero(sending))


def repeats_of_plan(local: Any) -> Any:
    """The rows a partition would send whose recipient an earlier row of the whole frame sends to
    (``local``: a lazy frame with ``action`` and the hidden key, see :func:`with_key`)."""
    return repeated_rows(local, _sent_candidates)


def _skip_repeats(local: pd.DataFrame, repeats: pd.DataFrame) -> pd.DataFrame:
    attrs = {k: v for k, v in local.attrs.items() if k != "totals"}
    out = local.drop(columns=RECIPIENT_KEY)
    if len(repeats):
        at = local_positions(repeats.index.to_numpy())
        action = out["action"].to_numpy(dtype=object).copy()
        action[at] = "skipped_duplicate"
        changed: dict[str, Any] = {"action": pd.Series(action, dtype=out["action"].dtype).array}
        if "reason" in out:
            reason = out["reason"].to_numpy(dtype=object).copy()
            reason[at] = duplicate_reasons(repeats["key"].to_numpy(dtype=object))
            changed["reason"] = pd.Series(reason, dtype=out["reason"].dtype).array
        if "billable" in out:  # an estimate: a skipped row costs nothing
            billable = out["billable"].to_numpy(dtype=bool).copy()
            billable[at] = False
            cost = out["cost"].to_numpy(dtype=float).copy()
            cost[at] = 0.0
            changed.update(billable=billable, cost=cost)
        out = out.assign(**changed)
    out.attrs = attrs
    return out


def _planned(msg: Message, frame: Any, method: Callable[..., pd.DataFrame], options: dict[str, Any],
             keep: str | Iterable[str] | None) -> Any:
    """``method`` (a message's plan, estimate or preview) on every partition, repeats skipped across partitions."""
    meta_frame = meta_of(frame)
    column = msg.recipient_column(meta_frame)
    if "duplicate" in keep_reasons(keep):  # repeats are sent: nothing spans partitions
        return on_partitions(_call, frame, method, {**options, "keep": keep})
    kind = msg.info.recipient
    wider = {**options, "keep": with_duplicates(keep)}
    meta = with_key(meta_frame, method, wider, column, kind).iloc[:0]
    frame = optimised(frame)
    local = frame.map_partitions(with_key, method, wider, column, kind, meta=meta, enforce_metadata=False)
    # worked out now and kept, so the answer (read later) does not hold every partition during the shuffle
    repeats = persist(repeats_of_plan(local))
    return frame.map_partitions(_keyed_then_skipped, repeats, method, wider, column, kind,
                                meta=meta.drop(columns=RECIPIENT_KEY), align_dataframes=False, enforce_metadata=False)


def _keyed_then_skipped(part: pd.DataFrame, repeats: pd.DataFrame, method: Callable[..., pd.DataFrame],
                        options: dict[str, Any], column: str, kind: str) -> pd.DataFrame:
    return _skip_repeats(with_key(part, method, options, column, kind), repeats)


def _call(part: pd.DataFrame, method: Callable[..., Any], options: dict[str, Any]) -> Any:
    return method(part, **options)


def render(msg: Message, frame: Any, *, field: str | None = None) -> Any:
    """:meth:`Message.render` of a Dask frame: a lazy ``text`` Series."""
    return on_partitions(_call, frame, msg.render, {"field": field})


def preflight(msg: Message, frame: Any, *, suppression: Any = None) -> Any:
    """:meth:`Message.preflight` of a Dask frame (lazy; ``duplicate_recipient`` across partitions)."""
    meta_frame = meta_of(frame)
    column = msg.recipient_column(meta_frame)
    meta = msg.preflight(meta_frame, suppression=suppression).iloc[:0]

    def full(part: pd.DataFrame) -> pd.DataFrame:
        return msg.preflight(part, suppression=suppression)

    def recipients_only(part: pd.DataFrame) -> pd.DataFrame:
        return msg.preflight(part[[column]])

    return checked_preflight(frame, full, recipients_only, msg.channel, column, meta)


def plan(msg: Message, frame: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None,
         now: Any = None, ledger: Any = None) -> Any:
    """:meth:`Message.plan` of a Dask frame: lazy ``action`` and ``reason`` per row."""
    options = {"suppression": suppression, **({"now": now} if now is not None else {}),
               **({"ledger": ledger} if ledger is not None else {})}
    return _planned(msg, frame, msg.plan, options, keep)


def preview(msg: Message, frame: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None) -> Any:
    """:meth:`Message.preview` of a Dask frame: lazy ``recipient``, ``text``, ``action``, ``reason``."""
    return _planned(msg, frame, msg.preview, {"suppression": suppression}, keep)


def estimate(msg: Message, frame: Any, *, prices: Any = None, suppression: Any = None,
             keep: str | Iterable[str] | None = None, attachments: int = 0) -> Any:
    """:meth:`Message.estimate` of a Dask frame (lazy; totals with :func:`sendframe.estimate_totals`)."""
    return _planned(msg, frame, msg.estimate, {"prices": prices, "suppression": suppression,
                                               "attachments": attachments}, keep)


def _rows_to_send(part: pd.DataFrame, planned: pd.DataFrame) -> pd.DataFrame:
    return part.loc[(planned["action"] == "send").to_numpy()].copy()


def ready(msg: Message, frame: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None) -> Any:
    """:meth:`Message.ready` of a Dask frame: the rows a send would send, lazily."""
    frame = optimised(frame)
    planned = plan(msg, frame, suppression=suppression, keep=keep)
    return frame.map_partitions(_rows_to_send, planned, meta=meta_of(frame), align_dataframes=False,
                                enforce_metadata=False)
