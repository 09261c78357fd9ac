"""Callback logs at any size: a folder, a glob or a list of logs as one frame, pandas or Dask.

``read_callbacks`` dispatches here when given more than one log (a folder, a glob, a list) or
``dask=True``. Each log is read by the pandas ``read_callbacks`` itself: a receiver log (``sendframe
receive``) with its own mapping, a web server's access log with the ``notification_url``'s; the
kind of each file is told from its first line, so the two may be mixed, plain or compressed.
The same notification found in several logs (a retry that reached two servers, a log copied
twice) is kept once, at its earliest arrival.

With ``dask=None`` (the default) the logs are read into pandas unless together they are larger
than :data:`LARGE_LOGS_BYTES`; the Dask frame has one partition per range of about
:data:`LOG_BLOCK_BYTES` of a plain log (cut at line breaks, as ``dask.bytes.read_bytes`` cuts) and per
compressed log (read whole: it cannot be cut), parsed with the log's own parameters (its ``#params``
lines are found first, in one pass on the cluster); once repeats across logs and ranges are dropped
(a shuffle on the message id), rows are grouped by id. ``latest_status``,
``message_outcomes`` and ``delivery_summary`` take such frames (see :func:`latest_status_partitions`,
:func:`outcomes_partitions` and :func:`summary_partitions`): the summary is a tree reduction
whose answer is a small pandas frame, equal to the pandas one on the same notifications.

    >>> callbacks = sendframe.read_callbacks(  # doctest: +SKIP
    ...     "logs/", "https://shop.example/dlr?mid=%i&st=%s", dask=True)
    >>> sendframe.delivery_summary(callbacks=callbacks, by="country")  # doctest: +SKIP
"""

from __future__ import annotations

import glob
import os
import re
import tempfile
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd
import pyarrow as pa

from sendframe.api.notifications import ESCAPE_CODES
from sendframe.delivery.logformat import COMPRESSED_ENDINGS, lines_of_bytes
from sendframe.delivery.parsing import LogParams, log_params, parse_with_queries
from sendframe.errors import InputError
from sendframe.scale.runtime import (
    byte_ranges,
    compute,
    dask_dataframe,
    delayed_call,
    from_pandas,
    is_dask_frame,
    meta_of,
)

__all__ = ["LARGE_LOGS_BYTES", "LOG_BLOCK_BYTES", "is_many_logs", "latest_status_partitions", "log_files",
           "outcomes_partitions", "read_logs", "summary_partitions"]

LARGE_LOGS_BYTES = 1024 * 1024 * 1024
"""Logs larger than this together are read as a Dask frame unless ``dask=False``."""
LOG_BLOCK_BYTES = 64 * 1024 * 1024
"""A plain log is read by Dask in ranges of about this many bytes (a partition each)."""
_RECEIVER_LINE = re.compile(rb"^(#params\t|\d{4}-\d\d-\d\dT[^\t\n]*\t)")
_RECEIVER_COLUMNS = frozenset(ESCAPE_CODES.values())
_PARAMS = "#params\t"


def is_many_logs(source: Any) -> bool:
    """Whether ``source`` names several logs: a folder, a glob or a list.

        >>> is_many_logs("callbacks.log"), is_many_logs(["a.log", "b.log"]), is_many_logs("logs/*.log")
        (False, True, True)
    """
    if isinstance(source, (list, tuple)):
        return True
    text = os.fspath(source)
    return any(c in text for c in "*?[") or Path(text).is_dir()


def log_files(source: Any) -> list[str]:
    """The log files ``source`` names, in order (a folder: every file in it, hidden ones left out).

        >>> log_files(["b.log", "a.log"])
        ['b.log', 'a.log']
    """
    if isinstance(source, (list, tuple)):
        return [f for item in source for f in log_files(item)]
    text = os.fspath(source)
    if any(c in text for c in "*?["):
        found = sorted(glob.glob(text))
    elif Path(text).is_dir():
        found = sorted(str(p) for p in Path(text).rglob("*") if p.is_file() and not p.name.startswith("."))
    else:
        found = [text]
    if not found:
        raise InputError(f"No callback log matches {text!r}.")
    return found


def _head(path: str, size: int = 1 << 16) -> bytes:
    with pa.input_stream(path, compression="detect") as stream:
        head: bytes = stream.read(size)  # pyarrow is untyped: read answers bytes
    return head


def _is_receiver_log(path: str) -> bool:
    first = next((line for line in _head(path).splitlines() if line.strip()), b"")
    return bool(_RECEIVER_LINE.match(first))


def _read_one(path: str, read: Callable[..., pd.DataFrame], notification_url: str | None) -> pd.DataFrame:
    if _is_receiver_log(path):
        return read(path)
    if notification_url is None:
        raise InputError(f"{path} is a web server's access log: pass the notification_url the service was given "
                         "(e.g. 'https://shop.example/dlr?mid=%i&st=%s'), so its parameters can be read.")
    return read(path, notification_url)


def _deduplicated(frame: pd.DataFrame) -> pd.DataFrame:
    """Each notification once, at its earliest arrival (equal in every column but ``received_at``)."""
    if frame.empty:
        return frame
    same = [c for c in frame.columns if c != "received_at"]
    ordered = frame.sort_values("received_at", kind="stable", na_position="last")
    return ordered.drop_duplicates(subset=same, keep="first").sort_index(kind="stable")


def _attrs_of(frames: Sequence[pd.DataFrame], dropped: int) -> dict[Hashable | None, Any]:
    examples = [line for f in frames for line in f.attrs.get("junk_examples", [])]
    return {"junk_lines": sum(int(f.attrs.get("junk_lines", 0)) for f in frames), "junk_examples": examples[:5],
            "duplicates_dropped": sum(int(f.attrs.get("duplicates_dropped", 0)) for f in frames) + dropped,
            "other_requests": sum(int(f.attrs.get("other_requests", 0)) for f in frames), "files": len(frames)}


def _columns(frames_columns: Iterable[Iterable[str]]) -> list[str]:
    names: list[str] = []
    for columns in frames_columns:
        names += [c for c in columns if c not in names and c != "received_at"]
    return [*names, "received_at"]


def _conformed(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    missing = {c: pd.Series(pd.NA, index=frame.index, dtype="string") for c in columns if c not in frame}
    return frame.assign(**missing)[list(columns)] if missing else frame[list(columns)]


def read_logs(read: Callable[..., pd.DataFrame], source: Any, notification_url: str | None = None, *,
              dask: bool | None = None, blocksize: int = LOG_BLOCK_BYTES) -> Any:
    """Every notification of the logs ``source`` names, once (see the module docstring).

    pandas: in the logs' order, with ``attrs`` summed over the logs (``junk_lines``,
    ``duplicates_dropped`` including repeats across logs, ``other_requests``, ``files``).
    Dask: one partition per range of about ``blocksize`` bytes of a plain log (cut at line breaks,
    :func:`~sendframe.scale.runtime.byte_ranges`) and per compressed log (read whole), then grouped
    by message id with the repeats across logs and ranges dropped.

        >>> read_logs(sendframe.read_callbacks, "logs/*.log.gz")  # doctest: +SKIP
    """
    files = log_files(source)
    if dask is None:
        dask = sum(os.path.getsize(f) for f in files) > LARGE_LOGS_BYTES
    if not dask:
        frames = [_read_one(f, read, notification_url) for f in files]
        columns = _columns([f.columns for f in frames])
        together = pd.concat([_conformed(f, columns) for f in frames], ignore_index=True)
        kept = _deduplicated(together).reset_index(drop=True)
        kept.attrs = _attrs_of(frames, len(together) - len(kept))
        return kept
    return _logs_frame(read, files, notification_url, blocksize)


def _logs_frame(read: Callable[..., pd.DataFrame], files: Sequence[str], notification_url: str | None,
                blocksize: int) -> Any:
    """The Dask frame of ``files``: a partition per byte range of a plain log, per compressed log; once per id."""
    dd = dask_dataframe()
    receiver = {f: _is_receiver_log(f) for f in files}
    ranges = {f: byte_ranges(f, blocksize) for f in files if not f.endswith(COMPRESSED_ENDINGS)}
    # one pass on the cluster: the #params lines of every receiver log (its own parameters, its order)
    found = compute(*[[delayed_call(_templates_in, block) for block in ranges[f]] if f in ranges
                      else delayed_call(_templates_of_file, f) for f in files if receiver[f]])
    templates = {f: [t for block in got for t in block] if f in ranges else got
                 for f, got in zip([f for f in files if receiver[f]], found, strict=True)}
    params = {f: log_params(pa.array(templates[f], pa.string())) if receiver[f]
              else _access_params(f, notification_url) for f in ranges}
    own = list(dict.fromkeys(p for f in files if receiver[f] for p in _own_of(templates[f])))
    if notification_url is not None:
        url_own = [n for n, v in parse_qsl(notification_url.split("?", 1)[-1], keep_blank_values=True)
                   if not (len(v) == 2 and v[0] == "%" and v[1] in ESCAPE_CODES)]
        own += [n for n in url_own if n not in own]
    empty = _empty_frame(files, read, notification_url)
    columns = _columns([empty.columns, [c for c in own if c not in empty.columns]])
    meta = _conformed(empty, columns).iloc[:0]
    parts = [delayed_call(_parsed_range, block, params[f], columns) for f in ranges for block in ranges[f]]
    parts += [delayed_call(_read_conformed, f, read, notification_url, columns) for f in files if f not in ranges]
    if not parts:
        return from_pandas(meta)
    frame = dd.from_delayed(parts, meta=meta, verify_meta=False)
    return frame.shuffle("id").map_partitions(_deduplicated_here, meta=meta, enforce_metadata=False)


def _access_params(path: str, notification_url: str | None) -> LogParams:
    if notification_url is None:
        raise InputError(f"{path} is a web server's access log: pass the notification_url the service was given "
                         "(e.g. 'https://shop.example/dlr?mid=%i&st=%s'), so its parameters can be read.")
    return log_params(pa.array([], pa.string()), notification_url)


def _own_of(templates: list[str]) -> list[str]:
    return log_params(pa.array(templates, pa.string())).own


def _templates_in(block: bytes) -> list[str]:
    """The ``#params`` lines of a range of a receiver log, in order, without their line break."""
    prefix = _PARAMS.encode()
    starts = [0] if block.startswith(prefix) else []
    at = block.find(b"\n" + prefix)
    while at >= 0:
        starts.append(at + 1)
        at = block.find(b"\n" + prefix, at + 1)
    ends = [block.find(b"\n", start) for start in starts]
    return [block[start:end if end >= 0 else None].decode("utf-8", errors="replace").rstrip("\r")
            for start, end in zip(starts, ends, strict=True)]


def _templates_of_file(path: str) -> list[str]:
    """The ``#params`` lines of a whole (compressed) receiver log."""
    with pa.input_stream(path, compression="detect") as stream:
        return _templates_in(stream.read())


def _parsed_range(block: bytes, params: LogParams, columns: Sequence[str]) -> pd.DataFrame:
    """The notifications of one range of a plain log, parsed as the pandas reader parses the whole log."""
    frame = parse_with_queries(lines_of_bytes(pa.py_buffer(block)), params)[0]
    frame.index = pd.RangeIndex(len(frame))
    return _conformed(frame, columns)


def _deduplicated_here(frame: pd.DataFrame) -> pd.DataFrame:
    return _deduplicated(frame).reset_index(drop=True)  # rows of several logs meet here: labels made unique


def _read_conformed(path: str, read: Callable[..., pd.DataFrame], notification_url: str | None,
                    columns: Sequence[str]) -> pd.DataFrame:
    frame = _read_one(path, read, notification_url)
    frame.index = pd.RangeIndex(len(frame))
    return _conformed(frame, columns)


def _empty_frame(files: Sequence[str], read: Callable[..., pd.DataFrame], notification_url: str | None) -> pd.DataFrame:
    """The typed columns of a callback frame, from an empty log of the first log's kind."""
    with tempfile.TemporaryDirectory() as folder:
        blank = Path(folder) / "empty.log"
        blank.write_text("")
        return read(str(blank), notification_url) if notification_url is not None else read(str(blank))


# ---------------------------------------------------------------------- what the frames give


def _paired(results: Any, callbacks: Any) -> tuple[Any, Any]:
    """Results and callbacks as Dask frames partitioned alike by message id (one id: one partition)."""
    if callbacks is not None and not is_dask_frame(callbacks):
        callbacks = from_pandas(callbacks)
    if results is not None and not is_dask_frame(results):
        results = from_pandas(results)
    parts = max(x.npartitions for x in (results, callbacks) if x is not None)
    keyed: list[Any] = []  # Dask frames, or None where not given
    for x in (results, callbacks):
        if x is None:
            keyed.append(None)
            continue
        x = x.assign(_id=x["id"].astype("string[pyarrow]"))
        keyed.append(x.shuffle("_id", npartitions=parts).drop(columns="_id"))
    return keyed[0], keyed[1]


def latest_status_partitions(latest_status: Callable[[pd.DataFrame], pd.DataFrame], callbacks: Any) -> Any:
    """``latest_status`` of a Dask callback frame: lazily, one row per message and part (rows grouped by id).

        >>> latest_status(callbacks_ddf).compute()  # doctest: +SKIP
    """
    meta = latest_status(meta_of(callbacks))
    keyed = callbacks.shuffle("id")
    return keyed.map_partitions(latest_status, meta=meta.iloc[:0], enforce_metadata=False)


def _outcomes_of(results: pd.DataFrame, callbacks: pd.DataFrame | None,
                 outcomes: Callable[..., pd.DataFrame]) -> pd.DataFrame:
    return outcomes(results, None if callbacks is None else callbacks.reset_index(drop=True))


def _only_frames(**given: Any) -> None:
    extra = [name for name, value in given.items() if value is not None]
    if extra:
        raise InputError(f"{', '.join(extra)} cannot be joined with Dask frames here: join them to the (small) "
                         "answer, or compute the frames first.")


def outcomes_partitions(message_outcomes: Callable[..., pd.DataFrame], results: Any, callbacks: Any = None, *,
                        records: Any = None, estimate: Any = None, recipients: Any = None) -> Any:
    """``message_outcomes`` of Dask results (and callbacks): lazily, one row per result, on the results' index.

        >>> message_outcomes(results_ddf, callbacks_ddf).to_parquet("outcomes.parquet")  # doctest: +SKIP
    """
    dask_dataframe()
    _only_frames(records=records, estimate=estimate, recipients=recipients)
    results, callbacks = _paired(results, callbacks)
    meta = message_outcomes(meta_of(results), meta_of(callbacks) if callbacks is not None else None).iloc[:0]
    if callbacks is None:
        return results.map_partitions(_outcomes_of, None, message_outcomes, meta=meta, enforce_metadata=False)
    return results.map_partitions(_outcomes_of, callbacks, message_outcomes, meta=meta, align_dataframes=False,
                                  enforce_metadata=False)


_ADDITIVE = ("sent", "skipped", "accepted", "rejected", "not_sent", "unknown_outcome", "delivered", "failed", "expired",
             "pending", "clicks")
_COSTS = ("estimated_cost", "billed_cost")
_SECONDS = "seconds_to_delivery"


def _results_from(callbacks: pd.DataFrame) -> pd.DataFrame:
    """As the pandas summary does without results: every message seen counts as accepted."""
    seen = callbacks[["id", "campaign_id", "sending_id"]].dropna(subset=["id"]).drop_duplicates("id")
    return seen.reset_index(drop=True).assign(accepted=True, outcome="accepted")


def _partition_tables(results: pd.DataFrame | None, callbacks: pd.DataFrame | None,
                      summary: Callable[..., pd.DataFrame], outcomes: Callable[..., pd.DataFrame],
                      keys: list[str]) -> pd.DataFrame:
    """One partition's counts and costs per group (the pandas summary's), and per group how often each
    time to delivery occurs (rows with ``_seconds`` set)."""
    if results is None:
        if callbacks is None or callbacks.empty:
            return pd.DataFrame()
        results = _results_from(callbacks)
    if results.empty:
        return pd.DataFrame()
    if callbacks is not None:
        callbacks = callbacks.reset_index(drop=True)
    counts = summary(results, callbacks, by=keys)
    recipients = next((results[c] for c in ("recipient", "to", "phone") if c in results), None)
    rows = outcomes(results, callbacks, recipients=recipients)
    rows["send_hour"] = rows["sent_at"].dt.floor("h")
    rows["operator"] = rows["country"].astype("string").fillna("?") + " " + rows["mnc"].astype("string").fillna("?")
    groups = [k for k in counts.columns if k in rows.columns and k not in (*_ADDITIVE, *_COSTS)]
    delivered = rows[rows[_SECONDS].notna()]
    times = delivered.groupby([*groups, _SECONDS], dropna=False, observed=True).size().rename("_times").reset_index()
    # the times rows get the counts' columns with the counts' dtypes (zero counts, missing costs and rates):
    # concatenated with rows lacking them, int64 counts would turn float64, and the sums with them
    padding = {c: pd.Series(0, index=times.index, dtype=counts[c].dtype) if c in _ADDITIVE
               else counts[c].iloc[:0].reindex(times.index) for c in counts.columns if c not in times}
    return pd.concat([counts.assign(_times=0), times.assign(**padding)[[*counts.columns, "_times", _SECONDS]]],
                     ignore_index=True)


def _quantile(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """The q-quantile (linear interpolation, as pandas) of ``values`` each occurring ``counts`` times."""
    if not counts.sum():
        return float("nan")
    order = np.argsort(values, kind="stable")
    values, cumulative = values[order], np.cumsum(counts[order])
    position = q * (cumulative[-1] - 1)
    low, high = int(np.floor(position)), int(np.ceil(position))
    at_low = values[np.searchsorted(cumulative, low + 1)]
    at_high = values[np.searchsorted(cumulative, high + 1)]
    return float(at_low + (at_high - at_low) * (position - low))


def _combined(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    found = [t for t in tables if len(t)]
    if not found:
        raise InputError("delivery_summary found no results and no notifications in the partitions.")
    every = pd.concat(found, ignore_index=True)
    summary_meta = every[every["_times"] == 0].drop(columns=["_times", _SECONDS], errors="ignore").iloc[:0]
    columns = list(summary_meta.columns)
    groups = [c for c in columns if c not in (*_ADDITIVE, *_COSTS, "delivery_rate", "delivery_rate_denominator",
                                               "median_seconds_to_delivery", "p95_seconds_to_delivery")]
    counted = every[every["_times"] == 0]
    grouped = counted.groupby(groups, dropna=False, observed=True, sort=True)
    out = grouped[list(_ADDITIVE)].sum().astype("int64")
    for cost in _COSTS:
        out[cost] = grouped[cost].sum(min_count=1)
    out["delivery_rate"] = (out["delivered"] / out["accepted"].where(out["accepted"] > 0)).astype("Float64")
    out["delivery_rate_denominator"] = pd.array(["accepted"] * len(out), dtype="string")
    medians, p95 = {}, {}
    if _SECONDS in every:
        times = every[every["_times"] > 0]
        for key, group in times.groupby(groups, dropna=False, observed=True, sort=True):
            values, counts = group[_SECONDS].to_numpy(dtype=float), group["_times"].to_numpy(dtype=np.int64)
            key = key if isinstance(key, tuple) else (key,)
            medians[key], p95[key] = _quantile(values, counts, 0.5), _quantile(values, counts, 0.95)
    index = [k if isinstance(k, tuple) else (k,) for k in out.index]
    out["median_seconds_to_delivery"] = [medians.get(k, np.nan) for k in index]
    out["p95_seconds_to_delivery"] = [p95.get(k, np.nan) for k in index]
    out = out.reset_index()[columns]
    return out.astype(summary_meta.dtypes.to_dict(), errors="ignore")


def summary_partitions(delivery_summary: Callable[..., pd.DataFrame], message_outcomes: Callable[..., pd.DataFrame],
                       results: Any = None, callbacks: Any = None, *, by: Sequence[str] | str = ("campaign_id",),
                       records: Any = None, estimate: Any = None) -> pd.DataFrame:
    """``delivery_summary`` over Dask results and/or callbacks: a tree reduction, a small pandas answer.

    Results and callbacks are partitioned alike by message id (all of one message in one
    partition); on each partition the pandas summary gives the counts and costs per group (added
    up across partitions), and each group's times to delivery are counted per distinct value
    (added up too), from which the median and 95th percentile are exactly pandas' own.

        >>> sendframe.delivery_summary(callbacks=callbacks_ddf, by="country")  # doctest: +SKIP
    """
    dask_dataframe()
    _only_frames(records=records, estimate=estimate)
    keys = [by] if isinstance(by, str) else list(by)
    results, callbacks = _paired(results, callbacks)
    empty = pd.DataFrame({"_": []})
    if results is None:
        partial = callbacks.map_partitions(
            lambda c: _partition_tables(None, c, delivery_summary, message_outcomes, keys),
            meta=empty, enforce_metadata=False)
    elif callbacks is None:
        partial = results.map_partitions(_partition_tables, None, delivery_summary, message_outcomes, keys, meta=empty,
                                         enforce_metadata=False)
    else:
        partial = results.map_partitions(_partition_tables, callbacks, delivery_summary, message_outcomes, keys,
                                         meta=empty, align_dataframes=False, enforce_metadata=False)
    (tables,) = compute(partial.to_delayed())
    return _combined(list(tables))
