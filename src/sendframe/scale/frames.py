"""Per-row work on Dask partitions: the same pandas function on every partition, totals by reduction.

The Dask engine (:mod:`sendframe.scale.engine`) hands over the pandas functions *themselves*, so the
very pandas code runs on every partition; results are lazy, their ``meta`` what the function answers
for an empty frame. Preflight's ``duplicate_recipient`` spans rows: a row repeating a recipient first
seen in another partition is found by :func:`sendframe.scale.repeats.repeated_rows`, and its message
is written by preflight itself, so the answer is pandas' own.

    >>> est = sendframe.sms("Hi {name}", sender="Shop", encoding="auto").estimate(contacts_ddf)  # doctest: +SKIP
    >>> sendframe.estimate_totals(est)["cost"]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign.estimate import estimate_sums, totals_of_sums
from sendframe.channels import channel as channel_info
from sendframe.scale.repeats import candidates, local_positions, repeated_rows
from sendframe.scale.runtime import compute, delayed_call, meta_of, optimised, persist

__all__ = ["estimate_totals", "on_partitions", "problem_counts"]

_DUPLICATE = "duplicate_recipient"


def _typed_like(result: Any, meta: Any) -> Any:
    """``result`` with the dtypes of ``meta`` where they differ (an odd partition must not change a column's type)."""
    if isinstance(meta, pd.Series):
        return result if result.dtype == meta.dtype or meta.dtype == object else result.astype(meta.dtype)
    changed = {c: meta[c].dtype for c in meta.columns if c in result and result[c].dtype != meta[c].dtype
               and meta[c].dtype != object}
    return result.astype(changed) if changed else result  # astype keeps attrs


def _apply(part: Any, function: Callable[..., Any], args: tuple[Any, ...], options: dict[str, Any], meta: Any) -> Any:
    return _typed_like(function(part, *args, **options), meta)


def on_partitions(function: Callable[..., Any], frame: Any, *args: Any, **options: Any) -> Any:
    """``function(partition, *args, **options)`` on every partition of a Dask ``frame``, lazily.

    The function runs once on the frame's empty ``meta`` first: wrong arguments fail at once, and its
    answer is the result's ``meta``. Row-wise functions only (render, estimate): the result keeps
    the partitions and index of ``frame``.

        >>> import pandas as pd, dask.dataframe as dd, sendframe  # doctest: +SKIP
        >>> frame = dd.from_pandas(pd.DataFrame({"n": ["a"]}), npartitions=1)  # doctest: +SKIP
        >>> on_partitions(render, frame, "Hi {n}").compute().tolist()  # doctest: +SKIP
        ['Hi a']
    """
    meta = function(meta_of(frame), *args, **options).iloc[:0]
    return frame.map_partitions(_apply, function, args, options, meta, meta=meta, enforce_metadata=False)


# ---------------------------------------------------------------------- preflight


def _valid_rows(part: pd.DataFrame, column: str, channel: str) -> pd.DataFrame:
    """Candidates of the duplicate rule: rows with a valid recipient, by their key (preflight's own rule,
    :func:`~sendframe.api.recipient_columns.sendable_keys`: no key for an invalid one)."""
    return candidates(sendable_keys(part[column], channel_info(channel).recipient), True, part.index)


def _duplicate_problems(part: pd.DataFrame, repeats: pd.DataFrame, column: str,
                        preflight_of: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    """Preflight's own duplicate_recipient rows for the repeats of ``part``, with their positions.

    Each recipient's first occurrence (maybe in another partition) is put before its repeats in a
    small frame of the recipient column alone, and preflight runs on it: its messages name the
    first occurrence's label as pandas would."""
    if repeats.empty:
        return pd.DataFrame({"position": np.zeros(0, np.int64)})
    positions = local_positions(repeats.index.to_numpy())
    order = np.lexsort((positions, repeats["first_order"].to_numpy()))  # by first occurrence, then position
    positions, firsts = positions[order], repeats["first_order"].to_numpy()[order]
    first_labels = repeats["first_label"].to_numpy(dtype=object)[order]
    values = part[column].to_numpy(dtype=object)[positions]
    starts = np.r_[True, firsts[1:] != firsts[:-1]]
    at = np.arange(len(positions)) + np.cumsum(starts)  # each first occurrence goes just before its repeats
    labels, cells = np.empty(at[-1] + 1, dtype=object), np.empty(at[-1] + 1, dtype=object)
    labels[at], cells[at] = part.index.to_numpy(dtype=object)[positions], values  # Python scalars: repr(label)
    labels[at[starts] - 1], cells[at[starts] - 1] = first_labels[starts], values[starts]
    probe = pd.DataFrame({column: pd.Series(cells, dtype=part[column].dtype).array},
                         index=pd.Index(labels, dtype=object))
    found = preflight_of(probe)
    duplicates = found[found["rule"] == _DUPLICATE].reset_index(drop=True)
    if len(duplicates) != len(positions):  # pragma: no cover - preflight flags exactly the later rows of a recipient
        raise RuntimeError(f"preflight found {len(duplicates)} repeats where {len(positions)} were expected")
    return duplicates.assign(position=positions)


def _merge_problems(part: pd.DataFrame, repeats: pd.DataFrame, preflight_of: Callable[[pd.DataFrame], pd.DataFrame],
                    column: str, meta: pd.DataFrame, partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    first_partition = (partition_info or {}).get("number", 0) == 0
    problems = preflight_of(part.reset_index(drop=True))  # rows are positions here; labels come back below
    problems = problems[problems["rule"] != _DUPLICATE]
    campaign = problems["row"].isna().to_numpy()
    if not first_partition:  # campaign-wide problems are said once, by the first partition
        problems, campaign = problems[~campaign], campaign[~campaign]
    problems = problems.assign(position=np.where(campaign, -1, problems["row"].fillna(-1).to_numpy(dtype=np.int64)),
                               _first=1)
    duplicates = _duplicate_problems(part, repeats, column, preflight_of).assign(_first=0)
    # a row's duplicate_recipient comes before its other problems (only invalid_recipient ranks higher,
    # and an invalid recipient is never a duplicate)
    merged = pd.concat([problems, duplicates], ignore_index=True) if len(duplicates) else problems
    merged = merged.sort_values(["position", "_first"], kind="stable")
    at = merged["position"].to_numpy(dtype=np.int64)
    rows = np.empty(len(merged), dtype=object)
    rows[at >= 0] = part.index[at[at >= 0]].to_numpy(dtype=object)
    rows[at < 0] = None
    out = merged.assign(row=rows)[list(meta.columns)].reset_index(drop=True)
    typed: pd.DataFrame = _typed_like(out, meta)
    return typed


def checked_preflight(frame: Any, preflight_of: Callable[[pd.DataFrame], pd.DataFrame], channel: str,
                      column: str) -> Any:
    """Every problem of a Dask frame, lazily, in the order and words of pandas, given the pandas preflight of one
    frame (``preflight_of``, which also writes the duplicates' words, on a frame of their recipient column).

    Row rules run per partition; campaign-wide problems are said once; ``duplicate_recipient`` is found across
    partitions (see the module docstring). The ``row`` column holds the frame's index labels.

        >>> problems = sendframe.sms("Hi {name}", sender="Shop").preflight(contacts_ddf)  # doctest: +SKIP
        >>> problem_counts(problems)  # doctest: +SKIP
    """
    meta = preflight_of(meta_of(frame)).iloc[:0]  # arguments checked here, at once
    frame = optimised(frame)
    # the repeats are worked out now (in the background on a cluster) and kept: the problems, read
    # later, do not hold every partition in memory while the shuffle runs
    repeats = persist(repeated_rows(frame, lambda part: _valid_rows(part[[column]], column, channel)))
    return frame.map_partitions(_merge_problems, repeats, preflight_of, column, meta, meta=meta,
                                align_dataframes=False, enforce_metadata=False)


# ---------------------------------------------------------------------- totals


def _sums(frame: pd.DataFrame) -> tuple[dict[str, int | float], str]:
    return estimate_sums(frame), frame.attrs.get("currency", "")


def estimate_totals(estimate: Any) -> dict[str, Any]:
    """The totals of a lazy Dask estimate: the pandas ``estimate_sums`` of each partition added up, made
    totals by the pandas ``totals_of_sums`` (so both answer alike).

        >>> estimate_totals(sendframe.sms("Hi {name}", sender="Shop").estimate(contacts_ddf))["cost"]  # doctest: +SKIP
    """
    (found,) = compute([delayed_call(_sums, part) for part in estimate.to_delayed()])
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
        (counts,) = compute(counts)
    table: pd.DataFrame = (counts.rename("problems").reset_index()
                           .sort_values(["problems", "rule"], ascending=[False, True])
                           .reset_index(drop=True).astype({"problems": "int64"}))
    return table
