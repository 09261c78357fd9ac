"""Callback logs past one machine as a Dask frame, and the delivery functions over such frames.

:func:`read_logs` (``read_callbacks(..., dask=True)``, or logs larger than
:data:`~sendframe.delivery.many_logs.LARGE_LOGS_BYTES` together) makes one partition per range of
about :data:`LOG_BLOCK_BYTES` of a plain log (cut at line breaks) and per compressed log, each parsed
with its log's own ``#params`` by the rules of :mod:`sendframe.delivery.many_logs`; repeats across
logs and ranges are dropped by a shuffle on the message id. ``latest_status``, ``message_outcomes``
and ``delivery_summary`` take such frames; the summary is a reduction to a small pandas frame, equal
to the pandas one on the same notifications.

    >>> callbacks = sendframe.read_callbacks("logs/", dask=True)  # doctest: +SKIP
    >>> sendframe.delivery_summary(callbacks=callbacks, by="country")  # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
from dask.bytes.core import read_bytes
from dask.dataframe.dispatch import make_meta

from sendframe.delivery import metrics
from sendframe.delivery.logformat import COMPRESSED_ENDINGS, lines_of_bytes
from sendframe.delivery.many_logs import conformed, deduplicated, log_columns, log_url
from sendframe.delivery.outcomes import outcomes
from sendframe.delivery.parsing import TEXT_CATEGORIES, LogParams, log_params, parse_with_queries
from sendframe.engines import named_files
from sendframe.errors import InputError
from sendframe.scale.partitions import delayed_call, from_pandas

__all__ = ["LOG_BLOCK_BYTES", "latest_status_partitions", "outcomes_partitions", "read_logs", "summary_partitions"]

LOG_BLOCK_BYTES = 64 * 1024 * 1024
"""A plain log is read by Dask in ranges of about this many bytes (a partition each)."""
_PARAMS_LINE = re.compile(rb"^#params\t[^\n]*", re.MULTILINE)


def read_logs(read: Callable[..., pd.DataFrame], source: Any, notification_url: str | None = None, *,
              blocksize: int = LOG_BLOCK_BYTES) -> Any:
    """Every notification of the logs ``source`` names, once, as a Dask frame (see the module docstring).

    One partition per range of about ``blocksize`` bytes of a plain log (cut at line breaks,
    ``dask.bytes.read_bytes``) and per compressed log (read whole), each parsed by the rules of ``read``
    (``read_callbacks``, not called: :func:`~sendframe.delivery.parsing.parse_with_queries` with its log's
    parameters), then grouped by message id with the repeats across logs and ranges dropped.

        >>> read_logs(sendframe.read_callbacks, "logs/*.log.gz")  # doctest: +SKIP
    """
    files = named_files(source, "callback log")
    urls = {f: log_url(f, notification_url) for f in files}  # None: a receiver log, read with its own #params
    # lazy ranges of bytes, each starting after a line break and ending on one: a compressed log whole
    ranges = {f: [delayed_call(_decompressed, f)] if f.endswith(COMPRESSED_ENDINGS)
              else read_bytes(f, delimiter=b"\n", blocksize=blocksize, sample=False)[1][0] for f in files}
    # one pass on the cluster: the #params lines of every receiver log (its own parameters, its order)
    (templates,) = dask.compute({f: [delayed_call(_templates_in, block) for block in ranges[f]]
                                    for f in files if urls[f] is None})
    params = {f: log_params(pa.array([t for got in templates.get(f, []) for t in got], pa.string()), urls[f])
              for f in files}
    none = pa.array([], pa.string())  # the typed columns of an empty log, with the notification_url's own parameters
    empty = parse_with_queries(none, log_params(none, notification_url))[0]
    columns = log_columns([empty.columns, [p for f in files for p in params[f].own]])
    meta = _typed_as_meta(conformed(empty, columns))
    parts = [delayed_call(_parsed_range, block, params[f], columns) for f in files for block in ranges[f]]
    if not parts:
        return from_pandas(meta)
    frame = dd.from_delayed(parts, meta=meta, verify_meta=False)
    # rows of several logs meet in a partition: labelled 0, 1, ... in each (Dask resets the index per partition)
    return frame.shuffle("id").map_partitions(deduplicated, meta=meta, enforce_metadata=False).reset_index(drop=True)


def _templates_in(block: bytes) -> list[str]:
    """The ``#params`` lines of a range of a receiver log, in order, without their line break."""
    return [line.decode("utf-8", errors="replace").rstrip("\r") for line in _PARAMS_LINE.findall(block)]


def _decompressed(path: str) -> bytes:
    """The bytes of a whole (compressed) log."""
    with pa.input_stream(path, compression="detect") as stream:
        data: bytes = stream.read()  # pyarrow is untyped
    return data


def _parsed_range(block: bytes, params: LogParams, columns: Sequence[str]) -> pd.DataFrame:
    """The notifications of one range of a plain log, parsed as the pandas reader parses the whole log."""
    return _typed_as_meta(conformed(parse_with_queries(lines_of_bytes(pa.py_buffer(block)), params)[0]
                                    .reset_index(drop=True), columns))


def _typed_as_meta(frame: pd.DataFrame) -> pd.DataFrame:
    """A partition with the columns whose categories are the values read (``sender``, ``mnc``) as text: a Dask
    frame's meta must know its categories before the logs are read."""
    return frame.astype(dict.fromkeys(TEXT_CATEGORIES, "string"))


# ---------------------------------------------------------------------- what the frames give


def _paired(results: Any, callbacks: Any) -> tuple[Any, Any]:
    """Results and callbacks as Dask frames partitioned alike by message id (one id: one partition), the callbacks
    labelled 0, 1, ... in each partition (where notifications of several partitions meet)."""
    frames = [x if x is None or isinstance(x, dd.DataFrame) else from_pandas(x) for x in (results, callbacks)]
    parts = max(x.npartitions for x in frames if x is not None)
    results, callbacks = [None if x is None else x.assign(_id=x["id"].astype("string[pyarrow]"))
                          .shuffle("_id", npartitions=parts).drop(columns="_id") for x in frames]
    return results, None if callbacks is None else callbacks.reset_index(drop=True)


def latest_status_partitions(latest_status: Callable[[pd.DataFrame], pd.DataFrame], callbacks: Any) -> Any:
    """``latest_status`` of a Dask callback frame: lazily, one row per message and part (rows grouped by id).

        >>> latest_status(callbacks_ddf).compute()  # doctest: +SKIP
    """
    meta = latest_status(make_meta(callbacks)).iloc[:0]
    return callbacks.shuffle("id").map_partitions(latest_status, meta=meta, enforce_metadata=False)


def _only_frames(**given: Any) -> None:
    extra = [name for name, value in given.items() if value is not None]
    if extra:
        raise InputError(f"{', '.join(extra)} cannot be joined with Dask frames here: join them to the (small) "
                         "answer, or compute the frames first.")


def outcomes_partitions(message_outcomes: Callable[..., pd.DataFrame], results: Any, callbacks: Any = None,
                        records: Any = None, *, estimate: Any = None, recipients: Any = None) -> Any:
    """``message_outcomes`` of Dask results (and callbacks): lazily, one row per result, on the results' index.

        >>> message_outcomes(results_ddf, callbacks_ddf).to_parquet("outcomes.parquet")  # doctest: +SKIP
    """
    _only_frames(records=records, estimate=estimate, recipients=recipients)
    results, callbacks = _paired(results, callbacks)
    meta = message_outcomes(*[None if x is None else make_meta(x) for x in (results, callbacks)]).iloc[:0]
    return results.map_partitions(message_outcomes, callbacks, meta=meta, align_dataframes=False,
                                  enforce_metadata=False)


_SECONDS = "seconds_to_delivery"


def _partition_sums(results: pd.DataFrame | None, callbacks: pd.DataFrame | None,
                    by: Sequence[str] | str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One partition's :func:`~sendframe.delivery.metrics.group_sums` (keys as columns), and per group how
    often each time to delivery occurs (``_times``), from the outcomes the pandas summary builds (an outcome
    table, ``sendframe.outcomes``' with its ``clicked`` and ``unsubscribed``, counted as it is)."""
    if results is None and callbacks is not None and not callbacks.empty:
        results = metrics.results_from(callbacks, None)
    if results is None or results.empty:
        return pd.DataFrame(), pd.DataFrame()
    table = results if callbacks is None and metrics.is_outcome_table(results) else outcomes(results, callbacks)
    table, keys = metrics.grouping_table(table, by=by, send_time=metrics.send_time_of(results))
    timed = table[table[_SECONDS].notna()]
    times = timed.groupby([*keys, _SECONDS], dropna=False, observed=True).size().rename("_times").reset_index()
    return metrics.group_sums(table, keys).reset_index(), times


def _percentiles(group: pd.DataFrame) -> pd.Series:
    """The latency quantiles (linear interpolation, as pandas) of the times ``_seconds`` each occurring ``_times``
    times."""
    order = np.argsort(group[_SECONDS].to_numpy(dtype=float), kind="stable")
    values = group[_SECONDS].to_numpy(dtype=float)[order]
    cumulative = np.cumsum(group["_times"].to_numpy(dtype=np.int64)[order])
    if not len(cumulative) or not cumulative[-1]:
        return pd.Series(np.nan, index=list(metrics.LATENCY_QUANTILES))
    position = np.array(list(metrics.LATENCY_QUANTILES.values())) * (cumulative[-1] - 1)
    low, high = (values[np.searchsorted(cumulative, at(position), side="right")] for at in (np.floor, np.ceil))
    return pd.Series(low + (high - low) * (position - np.floor(position)), index=list(metrics.LATENCY_QUANTILES))


def _combined(parts: Sequence[tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """The summary of the partitions' sums (added up) and time counts (the percentiles of all of them)."""
    found = [sums for sums, _ in parts if len(sums)]
    if not found:
        raise InputError("delivery_summary found no results and no notifications in the partitions.")
    every = pd.concat(found, ignore_index=True)
    summed = [*metrics.COUNT_COLUMNS, metrics.TIMED, metrics.FAST, *metrics.COST_COLUMNS]
    keys = [c for c in every.columns if c not in summed]  # country before mnc
    # a cost is missing where no part has one (min_count); a count never is
    sums = every.groupby(keys, dropna=False, observed=True, sort=True)[summed].sum(min_count=1)
    times = [t for _, t in parts if len(t)]
    latency = pd.DataFrame(index=sums.index)
    if times:
        counted = pd.concat(times, ignore_index=True).groupby(keys, dropna=False, observed=True, sort=True)
        latency = pd.DataFrame(counted[[_SECONDS, "_times"]].apply(_percentiles))
    return metrics.finished_summary(sums, latency)


def summary_partitions(delivery_summary: Callable[..., pd.DataFrame], results: Any = None, callbacks: Any = None,
                       records: Any = None, *, by: Sequence[str] | str = ("campaign_id",), estimate: Any = None,
                       contacts: Any = None) -> pd.DataFrame:
    """``delivery_summary`` (the pandas function) over Dask results and/or callbacks: a tree reduction, a small
    pandas answer.

    Results and callbacks are partitioned alike by message id (all of one message in one
    partition); on each partition the pandas summary's counts and costs per group
    (:func:`~sendframe.delivery.metrics.group_sums`) are added up across partitions, and each group's
    times to delivery are counted per distinct value (added up too), from which the percentiles are
    exactly pandas' own (linear interpolation); the rates and intervals are then made from the sums,
    as the pandas summary makes them (:func:`~sendframe.delivery.metrics.finished_summary`).

        >>> sendframe.delivery_summary(callbacks=callbacks_ddf, by="country")  # doctest: +SKIP
    """
    if contacts is not None:
        raise InputError("delivery_summary of Dask frames takes no contacts=: join the contact columns to the "
                         "results first (results.join(contacts[[...]])) and group by them.")
    _only_frames(records=records, estimate=estimate)
    results, callbacks = _paired(results, callbacks)
    given = next(x for x in (results, callbacks) if x is not None)
    results, callbacks = ([None] * given.npartitions if x is None else x.to_delayed() for x in (results, callbacks))
    return _combined(list(dask.compute(*[delayed_call(_partition_sums, r, c, by)
                                    for r, c in zip(results, callbacks, strict=True)])))
