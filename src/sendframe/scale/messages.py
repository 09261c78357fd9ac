"""A :class:`sendframe.Message` applied to a Dask frame: each partition prepared once, repeats settled across them.

``msg.prepare(frame)`` of a Dask frame answers :class:`PreparedPartitions`, whose views are lazy Dask
frames on the frame's partitions, equal to pandas' on the same rows. The one rule that spans rows,
a recipient an earlier row of another partition is sent to (``skipped_duplicate``), is settled by
:func:`sendframe.scale.repeats.repeated_rows` on the prepared ``recipient_key`` of the rows each
partition sends, in the policy's own words. A view is one graph: each partition is prepared once.

    >>> plan = sendframe.sms("Hi {name}", sender="Shop").plan(contacts_ddf)  # lazy  # doctest: +SKIP
    >>> plan["action"].value_counts().compute()  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sendframe.campaign.policy import keep_reasons, repeat_reasons
from sendframe.campaign.prepared import Prepared
from sendframe.scale.frames import checked_preflight
from sendframe.scale.repeats import candidates, local_positions, repeated_rows
from sendframe.scale.runtime import dask_dataframe, delayed_call, meta_of, optimised, pandas_strings

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["PreparedPartitions", "prepare", "prepared_partitions", "sent_repeats", "skip_elsewhere", "with_duplicates"]


def with_duplicates(keep: str | Iterable[str] | None) -> list[str]:
    """``keep`` with ``"duplicate"`` added: the reasons a partition's own plan keeps.

        >>> with_duplicates("invalid")
        ['duplicate', 'invalid']
    """
    return sorted(keep_reasons(keep) | {"duplicate"})


def _sent_keys(prepared: Prepared) -> pd.DataFrame:
    """Per row of a prepared partition: its ``recipient_key`` (the recipient as compared) if its plan sends it."""
    key = prepared.recipient_key.to_numpy(dtype=object).copy()
    key[(prepared.plan["action"] != "send").to_numpy()] = None
    return pd.DataFrame({"key": key}, index=prepared.contacts.index)


def sent_repeats(frame: Any, prepared: list[Any]) -> Any:
    """The rows whose recipient an earlier row of the whole (optimised) ``frame`` is sent to, among the rows the
    ``prepared`` partitions (lazy :class:`~sendframe.campaign.prepared.Prepared`, one per partition of ``frame``,
    repeats kept) send: a lazy frame of :func:`~sendframe.scale.repeats.repeated_rows`.

        >>> repeats = sent_repeats(frame, prepared_partitions(frame, msg, {"keep": ["duplicate"]}))  # doctest: +SKIP
    """
    meta = pd.DataFrame({"key": pd.Series([], dtype=object)}, index=meta_of(frame).index[:0])
    sent = _from_parts(frame, [delayed_call(_sent_keys, p) for p in prepared], meta)
    return repeated_rows(sent, lambda local: candidates(local["key"], True, local.index))  # a row not sent has none


def _from_parts(frame: Any, parts: list[Any], meta: pd.DataFrame) -> Any:
    """A Dask frame of the lazy pandas ``parts``, one per partition of ``frame``, typed as ``meta`` says."""
    with pandas_strings():  # Dask would retype the meta's str columns as string[pyarrow]
        return dask_dataframe().from_delayed(parts, meta=meta, divisions=frame.divisions, verify_meta=False)


def prepared_partitions(frame: Any, msg: Message, options: dict[str, Any], parts: list[Any] | None = None) -> list[Any]:
    """One lazy ``msg.prepare(partition, **options)`` per partition of ``frame`` (or per lazy pandas frame of
    ``parts``, one per partition of ``frame``).

        >>> prepared_partitions(frame, msg, {"keep": None})[0].compute().plan  # doctest: +SKIP
    """
    return [delayed_call(msg.prepare, part, **options) for part in (frame.to_delayed() if parts is None else parts)]


def skip_elsewhere(prepared: Prepared, repeats: pd.DataFrame) -> Prepared:
    """``prepared`` (a partition's) with the rows of ``repeats`` skipped: an earlier row of the whole frame
    sends to their recipient (the policy's words, as pandas says them of the whole frame); they cost nothing.

        >>> partition = skip_elsewhere(msg.prepare(part, keep=["duplicate"]), repeats)  # doctest: +SKIP
        >>> partition.plan["action"].value_counts()  # doctest: +SKIP
    """
    if repeats.empty:
        return prepared
    at = local_positions(repeats.index.to_numpy())
    plan, skipped = prepared.plan.copy(), np.zeros(len(prepared.plan), dtype=bool)
    skipped[at] = True
    plan.loc[skipped, "action"] = "skipped_duplicate"
    plan.loc[skipped, "reason"] = repeat_reasons(repeats["key"].to_numpy(dtype=object)[np.argsort(at)])
    return prepared.replanned(plan)


def _view(prepared: Prepared, repeats: pd.DataFrame | None, name: str) -> pd.DataFrame:
    """A partition's view ``name``, the rows of ``repeats`` skipped; a partition's own totals are not the
    frame's, so they are left out."""
    out: pd.DataFrame = getattr(skip_elsewhere(prepared, repeats) if repeats is not None else prepared, name)
    out = out.copy(deep=False)  # a cached view (plan) is not changed
    out.attrs = {k: v for k, v in out.attrs.items() if k != "totals"}
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class PreparedPartitions:
    """:meth:`sendframe.Message.prepare` of a Dask frame: each view a lazy Dask frame, as pandas' on the same rows.

    ``problems`` is the lazy preflight (``Message.preflight``'s); the other views are those of
    :class:`~sendframe.campaign.prepared.Prepared`, partition by partition, each partition prepared
    once per computation and the repeats across partitions skipped.

        >>> prepared = msg.prepare(contacts_ddf)  # doctest: +SKIP
        >>> prepared.plan["action"].value_counts().compute()  # doctest: +SKIP
    """

    message: Message
    contacts: Any
    options: dict[str, Any]

    def _views(self, name: str) -> Any:
        msg, frame, keep = self.message, optimised(self.contacts), self.options.get("keep")
        meta = _view(msg.prepare(meta_of(frame), **self.options), None, name).iloc[:0]
        if name == "schedule" or "duplicate" in keep_reasons(keep):  # nothing spans partitions
            parts = [delayed_call(_view, p, None, name) for p in prepared_partitions(frame, msg, self.options)]
        else:
            prepared = prepared_partitions(frame, msg, {**self.options, "keep": with_duplicates(keep)})
            repeats = sent_repeats(frame, prepared).to_delayed()
            parts = [delayed_call(_view, p, r, name) for p, r in zip(prepared, repeats, strict=True)]
        return _from_parts(frame, parts, meta)

    frame = property(lambda self: self._views("frame"), doc="Every per-row column (``Prepared.frame``), lazily.")
    plan = property(lambda self: self._views("plan"), doc="``action`` and ``reason`` per row, lazily.")
    preview = property(lambda self: self._views("preview"), doc="``recipient``, ``text``, ``action``, ``reason``.")
    estimate = property(lambda self: self._views("estimate"), doc="The priced columns and ``action`` per row.")
    ready = property(lambda self: self._views("ready"), doc="The rows a send sends, lazily.")
    schedule = property(lambda self: self._views("schedule"), doc="Each row's zone and local and UTC send time.")

    @property
    def problems(self) -> Any:
        """Every problem, one row each, lazily (``duplicate_recipient`` across partitions)."""
        msg = self.message
        return checked_preflight(self.contacts, functools.partial(msg.preflight, suppression=self.options.get(
            "suppression")), msg.channel, msg.recipient_column(meta_of(self.contacts)))


def prepare(msg: Message, frame: Any, **options: Any) -> PreparedPartitions:
    """:meth:`Message.prepare` of a Dask frame (lazy). Given no ``now``, every partition counts from the same
    moment, the present (``frequency_cap``, ``local_time``, ``quiet_hours``).

        >>> prepare(msg, contacts_ddf, keep=None).estimate  # doctest: +SKIP
    """
    msg.recipient_column(meta_of(frame))  # a missing recipient column is said at once, not at compute
    now = pd.Timestamp.now(tz="UTC") if options.get("now") is None else options["now"]
    return PreparedPartitions(msg, frame, {**options, "now": now})
