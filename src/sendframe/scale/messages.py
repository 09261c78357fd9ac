"""A :class:`sendframe.Message` applied to a Dask frame: each partition prepared once, repeats settled across them.

``msg.prepare(frame)`` of a Dask frame answers :class:`PreparedPartitions`, whose views are lazy Dask
frames on the frame's partitions, equal to pandas' on the same rows. The one rule that spans rows,
a recipient an earlier row of another partition is sent to (``skipped_duplicate``), is settled by
:func:`sendframe.scale.partitions.repeated_rows` on the prepared ``recipient_key`` of the rows each
partition sends, in the policy's own words. A view is one graph: each partition is prepared once.
``msg.render`` runs on every partition (:func:`render`); preflight's ``duplicate_recipient`` is found
across partitions and written with preflight's own ``Problems`` (:attr:`PreparedPartitions.problems`); an
estimate's totals are the pandas sums of each partition added up (:func:`estimate_totals`).

    >>> plan = sendframe.sms("Hi {name}", sender="Shop").plan(contacts_ddf)  # lazy  # doctest: +SKIP
    >>> plan["action"].value_counts().compute()  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.dataframe.dispatch import make_meta

from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign.policy import keep_reasons, skip_repeats
from sendframe.campaign.preflight import Problems
from sendframe.campaign.prepared import Prepared, estimate_sums, totals_of_sums
from sendframe.scale.partitions import candidates, delayed_call, local_positions, pandas_strings, repeated_rows

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["PreparedPartitions", "estimate_totals", "prepare", "problem_counts", "render", "sent_repeats",
           "skip_elsewhere", "with_duplicates"]

_DUPLICATE = "duplicate_recipient"


def with_duplicates(keep: str | Iterable[str] | None) -> list[str]:
    """``keep`` with ``"duplicate"`` added: the reasons a partition's own plan keeps.

        >>> with_duplicates("invalid")
        ['duplicate', 'invalid']
    """
    return sorted(keep_reasons(keep) | {"duplicate"})


def _sent_keys(prepared: Prepared) -> pd.DataFrame:
    """Per row of a prepared partition: its ``recipient_key`` (the recipient as compared) if its plan sends it."""
    return pd.DataFrame({"key": prepared.recipient_key.where(prepared.sent).to_numpy(dtype=object)},
                        index=prepared.contacts.index)


def sent_repeats(frame: Any, prepared: list[Any]) -> Any:
    """The rows whose recipient an earlier row of the whole (optimised) ``frame`` is sent to, among the rows the
    ``prepared`` partitions (lazy :class:`~sendframe.campaign.prepared.Prepared`, one per partition of ``frame``,
    repeats kept) send: a lazy frame of :func:`~sendframe.scale.partitions.repeated_rows`.

        >>> repeats = sent_repeats(frame, [dask.delayed(msg.prepare)(part, keep=["duplicate"])  # doctest: +SKIP
        ...                                for part in frame.to_delayed()])
    """
    meta = pd.DataFrame({"key": pd.Series([], dtype=object)}, index=make_meta(frame).index[:0])
    sent = _from_parts(frame, [delayed_call(_sent_keys, p) for p in prepared], meta)
    return repeated_rows(sent, lambda local: candidates(local["key"], True, local.index))  # a row not sent has none


def _from_parts(frame: Any, parts: list[Any], meta: pd.DataFrame) -> Any:
    """A Dask frame of the lazy pandas ``parts``, one per partition of ``frame``, typed as ``meta`` says."""
    with pandas_strings():  # Dask would retype the meta's str columns as string[pyarrow]
        return dd.from_delayed(parts, meta=meta, divisions=frame.divisions,
                                                          verify_meta=False)


def skip_elsewhere(prepared: Prepared, repeats: pd.DataFrame | None) -> Prepared:
    """``prepared`` (a partition's) with the rows of ``repeats`` skipped: an earlier row of the whole frame
    sends to their recipient (the policy's words, as pandas says them of the whole frame); they cost nothing.

        >>> partition = skip_elsewhere(msg.prepare(part, keep=["duplicate"]), repeats)  # doctest: +SKIP
        >>> partition.plan["action"].value_counts()  # doctest: +SKIP
    """
    if repeats is None or repeats.empty:
        return prepared
    at = local_positions(repeats.index.to_numpy())
    keys = repeats["key"].to_numpy(dtype=object)[np.argsort(at)]
    return prepared.replanned(skip_repeats(prepared.plan, np.isin(np.arange(len(prepared.plan)), at), keys))


def _view(prepared: Prepared, repeats: pd.DataFrame | None, name: str) -> pd.DataFrame:
    """A partition's view ``name``, the rows of ``repeats`` skipped; a partition's own totals are not the
    frame's, so they are left out."""
    out: pd.DataFrame = getattr(skip_elsewhere(prepared, repeats), name).copy(deep=False)  # the cached plan kept
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
        msg, frame, keep = self.message, self.contacts.optimize(), self.options.get("keep")
        meta = _view(msg.prepare(make_meta(frame), **self.options), None, name).iloc[:0]
        options = {**self.options, "keep": with_duplicates(keep)}  # each partition prepared once, its repeats kept
        prepared = [delayed_call(msg.prepare, part, **options) for part in frame.to_delayed()]
        spans = name != "schedule" and "duplicate" not in keep_reasons(keep)  # else nothing spans partitions
        repeats = sent_repeats(frame, prepared).to_delayed() if spans else [None] * len(prepared)
        views = [delayed_call(_view, p, r, name) for p, r in zip(prepared, repeats, strict=True)]
        return _from_parts(frame, views, meta)

    frame = property(lambda self: self._views("frame"), doc="Every per-row column (``Prepared.frame``), lazily.")
    plan = property(lambda self: self._views("plan"), doc="``action`` and ``reason`` per row, lazily.")
    preview = property(lambda self: self._views("preview"), doc="``recipient``, ``text``, ``action``, ``reason``.")
    estimate = property(lambda self: self._views("estimate"), doc="The priced columns and ``action`` per row.")
    ready = property(lambda self: self._views("ready"), doc="The rows a send sends, lazily.")
    schedule = property(lambda self: self._views("schedule"), doc="Each row's zone and local and UTC send time.")

    @property
    def problems(self) -> Any:
        """Every problem (``Message.preflight``'s), one row each, lazily, in the order and words of pandas.

        Row rules run per partition; campaign-wide problems are said once; ``duplicate_recipient`` is found
        across partitions and written in preflight's words (see the module docstring). The ``row`` column holds
        the frame's index labels.

            >>> problem_counts(sendframe.sms("Hi {name}", sender="Shop").preflight(contacts_ddf))  # doctest: +SKIP
        """
        msg, kind = self.message, self.message.info.recipient
        preflight_of = functools.partial(msg.preflight, suppression=self.options.get("suppression"))
        meta = preflight_of(make_meta(self.contacts)).iloc[:0]  # arguments checked here, at once
        frame, column = self.contacts.optimize(), msg.recipient_column(make_meta(self.contacts))
        # candidates: rows with a valid recipient, by their key (preflight's own rule, no key for an invalid one).
        # The repeats are worked out now (in the background on a cluster) and kept: the problems, read later,
        # do not hold every partition in memory while the shuffle runs
        (repeats,) = dask.persist(repeated_rows(frame, lambda part: candidates(sendable_keys(part[column], kind),
                                                                              True, part.index)))
        return frame.map_partitions(_merge_problems, repeats, preflight_of, column, meta, meta=meta,
                                    align_dataframes=False, enforce_metadata=False)


def prepare(function: Callable[..., Prepared], msg: Message, frame: Any, **options: Any) -> PreparedPartitions:
    """:meth:`Message.prepare` (``function``) of a Dask frame (lazy). Given no ``now``, every partition counts from
    the same moment, the present (``frequency_cap``, ``local_time``, ``quiet_hours``).

        >>> prepare(Message.prepare, msg, contacts_ddf, keep=None).estimate  # doctest: +SKIP
    """
    msg.recipient_column(make_meta(frame))  # a missing recipient column is said at once, not at compute
    now = pd.Timestamp.now(tz="UTC") if options.get("now") is None else options["now"]
    return PreparedPartitions(msg, frame, {**options, "now": now})


# ---------------------------------------------------------------------- render


def render(function: Callable[..., pd.Series], msg: Message, frame: Any, *, field: str | None = None) -> Any:
    """:meth:`Message.render` (``function``) of a Dask ``frame``, lazily: the pandas render of every partition, on
    the frame's partitions and index. It runs once on the frame's empty ``meta`` first, so wrong arguments fail at
    once.

        >>> render(Message.render, sendframe.sms("Hi {name}", sender="Shop"), contacts_ddf).compute()  # doctest: +SKIP
    """
    meta = function(msg, make_meta(frame), field=field).iloc[:0]
    return frame.map_partitions(functools.partial(function, msg), field=field, meta=meta, enforce_metadata=False)


# ---------------------------------------------------------------------- preflight


def _merge_problems(part: pd.DataFrame, repeats: pd.DataFrame, preflight_of: Callable[[pd.DataFrame], pd.DataFrame],
                    column: str, meta: pd.DataFrame, partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    problems = preflight_of(part.reset_index(drop=True))  # rows are positions here (None: campaign-wide)
    # campaign-wide problems are said once, by the first partition; the repeats are those found across partitions
    said = problems["row"].notna() | ((partition_info or {}).get("number", 0) == 0)
    # the repeats in preflight's own words (its Problems), each naming its first occurrence, maybe in another
    # partition; put first, as a row's duplicate_recipient comes before its other problems (only
    # invalid_recipient ranks higher, and an invalid recipient is never a duplicate)
    at = local_positions(repeats.index.to_numpy())
    order = np.argsort(at, kind="stable")
    found = Problems(pd.RangeIndex(len(part)))
    found.add(_DUPLICATE, column, np.isin(np.arange(len(part)), at), value=part[column].iloc[at[order]],
              first=repeats["first_label"].iloc[order])
    merged = pd.concat([found.frame(), problems[said & (problems["rule"] != _DUPLICATE)]], ignore_index=True)
    position = merged["row"].fillna(-1).to_numpy(dtype=np.int64)
    order = np.argsort(position, kind="stable")
    labels = np.concatenate([part.index.to_numpy(dtype=object), np.array([None])])  # position -1: None
    out = merged.iloc[order].assign(row=labels[position[order]])[list(meta.columns)].reset_index(drop=True)
    typed: pd.DataFrame = out.astype(meta.dtypes)  # an odd partition must not change a column's type
    return typed


# ---------------------------------------------------------------------- totals


def _sums(frame: pd.DataFrame) -> tuple[dict[str, int | float], str]:
    return estimate_sums(frame), frame.attrs.get("currency", "")


def estimate_totals(function: Callable[..., dict[str, Any]], estimate: Any) -> dict[str, Any]:
    """The totals of a lazy Dask estimate (``function``'s, :func:`sendframe.estimate_totals`): the pandas
    ``estimate_sums`` of each partition added up, made totals by the pandas ``totals_of_sums`` (so both answer alike).

        >>> sendframe.estimate_totals(sendframe.sms("Hi", sender="Shop").estimate(contacts_ddf))  # doctest: +SKIP
    """
    (found,) = dask.compute([delayed_call(_sums, part) for part in estimate.to_delayed()])
    currencies = [c for c in dict.fromkeys(currency for _, currency in found) if c]
    sums = pd.DataFrame([sums for sums, _ in found]).sum()
    return totals_of_sums({str(name): value for name, value in sums.items()}, "/".join(currencies) or "EUR")


def problem_counts(problems: Any) -> pd.DataFrame:
    """How many problems of each rule and severity (a small pandas frame), from pandas or Dask problems.

        >>> problems = pd.DataFrame({"rule": ["missing_variable", "missing_variable"], "severity": ["error", "error"]})
        >>> problem_counts(problems).to_dict("records")
        [{'rule': 'missing_variable', 'severity': 'error', 'problems': 2}]
    """
    counts = problems.groupby(["rule", "severity"], observed=True).size()
    if hasattr(counts, "compute"):
        counts = counts.compute()
    table: pd.DataFrame = (counts.rename("problems").reset_index()
                           .sort_values(["problems", "rule"], ascending=[False, True])
                           .reset_index(drop=True).astype({"problems": "int64"}))
    return table
