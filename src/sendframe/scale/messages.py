"""A :class:`sendframe.Message` applied to a Dask frame: render, preview, preflight, plan, ready, estimate.

Each method of the message comes here through the Dask engine (:mod:`sendframe.scale.engine`) when
given a Dask frame, and runs itself on every partition. The one rule that spans rows, a recipient
repeated in another partition (``skipped_duplicate``), is settled across partitions by
:func:`sendframe.scale.repeats.repeated_rows`: the rows each partition's prepared frame
(:meth:`sendframe.Message.prepare`) sends are the candidates, compared by its ``recipient_key``, and
a candidate whose recipient an earlier candidate of the whole frame has is skipped, with the
policy's own words. The answers equal pandas' on the same rows.

    >>> msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto")  # doctest: +SKIP
    >>> plan = msg.plan(contacts_ddf)  # lazy  # doctest: +SKIP
    >>> plan["action"].value_counts().compute()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sendframe.campaign.policy import keep_reasons, repeat_reasons
from sendframe.campaign.prepared import Prepared
from sendframe.scale.frames import checked_preflight, on_partitions
from sendframe.scale.repeats import local_positions, repeated_rows
from sendframe.scale.runtime import meta_of, optimised, persist

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["preflight", "prepared_view", "render", "sent_repeats", "skip_elsewhere",
           "skipped_as_repeats", "with_duplicates"]


def with_duplicates(keep: str | Iterable[str] | None) -> list[str]:
    """``keep`` with ``"duplicate"`` added: the reasons a partition's own plan keeps.

        >>> with_duplicates("invalid")
        ['duplicate', 'invalid']
    """
    return sorted(keep_reasons(keep) | {"duplicate"})


def _sent_keys(part: pd.DataFrame, msg: Message, options: dict[str, Any]) -> pd.DataFrame:
    """Per row of a partition: its prepared plan's ``action`` and ``recipient_key`` (the recipient as compared)."""
    prepared = msg.prepare(part, **options)
    return pd.DataFrame({"action": prepared.plan["action"].to_numpy(dtype=object),
                         "key": prepared.recipient_key.to_numpy(dtype=object)}, index=part.index)


def _sent_candidates(local: pd.DataFrame) -> pd.DataFrame:
    sending = (local["action"] == "send").to_numpy() & local["key"].notna().to_numpy()
    return pd.DataFrame({"key": local["key"].to_numpy(dtype=object)[sending], "label": local.index[sending]},
                        index=np.flatnonzero(sending))


def sent_repeats(msg: Message, frame: Any, options: dict[str, Any]) -> Any:
    """The rows whose recipient an earlier row of the whole (optimised) ``frame`` is sent to, among the rows
    each partition's own prepared frame (``msg.prepare(partition, **options)``, repeats kept) sends: a lazy
    frame of :func:`~sendframe.scale.repeats.repeated_rows`."""
    meta = pd.DataFrame({"action": pd.Series([], dtype=object), "key": pd.Series([], dtype=object)},
                        index=meta_of(frame).index[:0])
    local = frame.map_partitions(_sent_keys, msg, options, meta=meta, enforce_metadata=False)
    return repeated_rows(local, _sent_candidates)


def skipped_as_repeats(plan: pd.DataFrame, at: np.ndarray, keys: np.ndarray) -> pd.DataFrame:
    """``plan`` (``action`` and, if it has one, ``reason``) with the rows at positions ``at`` skipped as
    repeats of their recipients (``keys``), in the policy's words; the other columns as they were.

        >>> plan = pd.DataFrame({"action": ["send", "send"], "reason": [None, None]})
        >>> skipped_as_repeats(plan, np.array([1]), np.array(["34600123456"]))["action"].tolist()
        ['send', 'skipped_duplicate']
    """
    if not len(at):
        return plan
    action = plan["action"].to_numpy(dtype=object).copy()
    action[at] = "skipped_duplicate"
    changed: dict[str, Any] = {"action": pd.Series(action, dtype=plan["action"].dtype).array}
    if "reason" in plan:
        reason = plan["reason"].to_numpy(dtype=object).copy()
        reason[at] = repeat_reasons(keys)
        changed["reason"] = pd.Series(reason, dtype=plan["reason"].dtype).array
    return plan.assign(**changed)


def skip_elsewhere(prepared: Prepared, repeats: pd.DataFrame) -> Prepared:
    """``prepared`` (a partition's) with the rows of ``repeats`` skipped: an earlier row of the whole frame
    sends to their recipient (the policy's words, as pandas says them of the whole frame); they cost nothing.

        >>> partition = skip_elsewhere(msg.prepare(part, keep=["duplicate"]), repeats)  # doctest: +SKIP
        >>> partition.plan["action"].value_counts()  # doctest: +SKIP
    """
    if repeats.empty:
        return prepared
    at = local_positions(repeats.index.to_numpy())
    return prepared.replanned(skipped_as_repeats(prepared.plan, at, repeats["key"].to_numpy(dtype=object)))


def _view(part: pd.DataFrame, msg: Message, name: str, options: dict[str, Any],
          repeats: pd.DataFrame | None = None) -> pd.DataFrame:
    """A partition's view ``name`` of its prepared frame, the rows of ``repeats`` skipped; a partition's own
    totals are not the frame's, so they are left out."""
    prepared = msg.prepare(part, **options)
    out: pd.DataFrame = getattr(skip_elsewhere(prepared, repeats) if repeats is not None else prepared, name)
    out = out.copy(deep=False)  # a cached view (plan) is not changed
    out.attrs = {k: v for k, v in out.attrs.items() if k != "totals"}
    return out


def prepared_view(msg: Message, frame: Any, name: str, options: dict[str, Any]) -> Any:
    """:meth:`Message.plan`, ``preview``, ``estimate`` or ``ready`` (``name``, a view of
    :class:`~sendframe.campaign.prepared.Prepared`) of a Dask frame, lazily, repeats skipped across partitions.

        >>> plan = prepared_view(msg, contacts_ddf, "plan", {"suppression": None, "keep": None})  # doctest: +SKIP
        >>> plan["action"].value_counts().compute()  # doctest: +SKIP
    """
    keep = options.get("keep")
    if "duplicate" in keep_reasons(keep):  # repeats are sent: nothing spans partitions
        return on_partitions(_view, frame, msg, name, options)
    wider = {**options, "keep": with_duplicates(keep)}
    meta = _view(meta_of(frame), msg, name, wider).iloc[:0]
    frame = optimised(frame)
    plan_options = {k: v for k, v in wider.items() if k in ("suppression", "keep", "now", "ledger")}
    # worked out now and kept, so the answer (read later) does not hold every partition during the shuffle
    repeats = persist(sent_repeats(msg, frame, plan_options))
    return frame.map_partitions(_view, msg, name, wider, repeats, meta=meta, align_dataframes=False,
                                enforce_metadata=False)


def _render(part: pd.DataFrame, msg: Message, field: str | None) -> pd.Series:
    return msg.render(part, field=field)


def render(msg: Message, frame: Any, *, field: str | None = None) -> Any:
    """:meth:`Message.render` of a Dask frame: a lazy ``text`` Series."""
    return on_partitions(_render, frame, msg, field)


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
