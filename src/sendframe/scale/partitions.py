"""Working across the partitions of a Dask frame: each row's place in the whole frame, the rows that repeat an
earlier row's recipient, and frames built with pandas' own text dtype.

Dask is imported with :mod:`sendframe.scale`, which :class:`~sendframe.scale.engine.DaskEngine` imports only
when a Dask frame is met (saying how to install Dask when it is missing), so the pandas path never pays for it.

A row's place in the whole frame is its *order*: ``partition number << 40 | position in the
partition`` (a partition holds fewer than 2**40 rows), so "earlier" means exactly what it means
in pandas, whatever the index holds. The candidates of every partition (recipient key, order,
label) are shuffled on the key, so all rows of one recipient meet in one partition; there the
rows after the first are the repeats, each with the label and order of its first occurrence.
The repeats are then sent back to the partition they came from (a shuffle on the order with one
division per partition), ready to be merged partition by partition with ``map_partitions``.

    >>> import pandas as pd, dask.dataframe as dd  # doctest: +SKIP
    >>> frame = dd.from_pandas(pd.DataFrame({"phone": ["1", "2", "1"]}), npartitions=2)  # doctest: +SKIP
    >>> found = repeated_rows(frame, lambda p: pd.DataFrame({"key": p["phone"], "label": p.index}))  # doctest: +SKIP
    >>> found.compute()["first_label"].tolist()  # doctest: +SKIP
    [0]
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.dataframe.dispatch import make_meta

__all__ = ["ORDER_BITS", "candidates", "delayed_call", "from_pandas", "local_positions", "pandas_strings",
           "repeated_rows", "row_offsets"]

ORDER_BITS = 40
_LOCAL = (1 << ORDER_BITS) - 1


def local_positions(orders: Any) -> np.ndarray:
    """The position within its partition of each order.

        >>> local_positions(np.array([5, (1 << 40) + 3])).tolist()
        [5, 3]
    """
    return np.asarray(orders, dtype=np.int64) & _LOCAL


def candidates(keys: Any, chosen: Any, labels: pd.Index) -> pd.DataFrame:
    """What a ``pick`` of :func:`repeated_rows` answers: the ``chosen`` rows with a key, by key and label,
    on their positions in the partition.

        >>> candidates(pd.Series(["a", None, "a"]), [True, True, False], pd.Index([7, 8, 9])).to_dict("list")
        {'key': ['a'], 'label': [7]}
    """
    keys = np.asarray(keys, dtype=object)
    kept = np.asarray(chosen, dtype=bool) & pd.notna(keys)
    return pd.DataFrame({"key": keys[kept], "label": labels[kept]}, index=np.flatnonzero(kept))


def _candidates(part: pd.DataFrame, pick: Callable[[pd.DataFrame], pd.DataFrame], label_type: Any,
                partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    found = pick(part)  # key and label of the candidate rows, on their positions in the partition
    return pd.DataFrame({"key": pd.array(found["key"].to_numpy(dtype=object), dtype="str"),
                         "order": (np.int64(number) << ORDER_BITS) + np.asarray(found.index, dtype=np.int64),
                         "label": pd.array(found["label"].to_numpy(dtype=object if label_type is object else None),
                                           dtype=label_type)})


def _repeats_of(part: pd.DataFrame) -> pd.DataFrame:
    """The rows of a shuffled partition that are not their key's first occurrence, with the first one's label."""
    part = part.sort_values("order", kind="stable")
    first_label = part.groupby("key", sort=False)["label"].transform("first")
    later = part["key"].duplicated(keep="first").to_numpy()
    return part.assign(first_label=first_label).drop(columns="label")[later]


def repeated_rows(frame: Any, pick: Callable[[pd.DataFrame], pd.DataFrame]) -> Any:
    """The rows of a Dask ``frame`` whose key repeats an earlier row's, back in their partitions.

    ``pick(partition)`` returns the partition's candidates: a frame with ``key`` (text compared as
    given: fold case before for emails) and ``label`` (the row's index label), on the candidates'
    positions in the partition (0, 1, ...). Rows not returned never count. The answer has the
    partitions of ``frame`` (merge it with ``map_partitions(..., align_dataframes=False)``); its
    index is the repeat's order (:func:`local_positions` gives its position) and its columns are
    ``key`` and ``first_label`` (the first occurrence's label). ``frame`` is optimised (``frame.optimize()``):
    Dask may fuse the partitions of a Parquet read when only some columns are used, so the frames paired
    partition by partition must have the optimised frame's partitions.
    """
    index = make_meta(frame).index
    label_type = index.dtype if index.dtype.kind in "iub" else object  # else labels as Python objects
    empty = _candidates(make_meta(frame), pick, label_type)
    candidates = frame.map_partitions(_candidates, pick, label_type, meta=empty, enforce_metadata=False)
    repeats = candidates.shuffle("key").map_partitions(_repeats_of, meta=_repeats_of(empty), enforce_metadata=False)
    # partition i holds the orders [i << 40, (i + 1) << 40): each repeat goes back to its own partition
    bounds = [i << ORDER_BITS for i in range(frame.npartitions)] + [(frame.npartitions << ORDER_BITS) - 1]
    aligned = repeats.set_index("order", divisions=bounds, sorted=False)
    if aligned.npartitions != frame.npartitions:  # pragma: no cover - set_index keeps the divisions given
        raise RuntimeError("repeats could not be aligned with the frame's partitions")
    return aligned


# ---------------------------------------------------------------------- Dask with pandas' rules


def pandas_strings() -> AbstractContextManager[Any]:
    """A context in which Dask builds frames with pandas' own text dtype.

    By default (``dataframe.convert-string``) Dask turns every text column it reads or is given
    (``read_csv``, ``read_parquet``, ``from_pandas``) into ``string[pyarrow]``, whose missing value
    is ``pd.NA``, where pandas reads ``str`` (missing: ``nan``): comparisons and ``.str`` methods then
    answer other dtypes than pandas on the same rows. Frames sendframe reads or converts itself are
    built in this context, so a column is typed as the pandas reader types it; the choice is fixed
    when the frame is built (computing it later, in any context, keeps it).

        >>> with pandas_strings():  # doctest: +SKIP
        ...     frame = dd.read_csv("contacts-*.csv", dtype=str)
    """
    context: AbstractContextManager[Any] = dask.config.set({"dataframe.convert-string": False})
    return context


def from_pandas(frame: pd.DataFrame, npartitions: int = 1) -> Any:
    """A Dask frame of a pandas ``frame``, rows in their order and every column of the dtype it has
    (Dask's ``from_pandas`` would turn text columns into ``string[pyarrow]``: see :func:`pandas_strings`).

        >>> from_pandas(pd.DataFrame({"name": ["Ana", None]})).dtypes["name"]
        <StringDtype(na_value=nan)>
    """
    with pandas_strings():
        return dd.from_pandas(frame, npartitions=npartitions, sort=False)


def row_offsets(counted: Any) -> np.ndarray:
    """Where each partition's rows start in the whole frame, then the total, from the computed lengths of its
    partitions (for one partition Dask answers a bare number).

        >>> row_offsets([3, 2]).tolist(), row_offsets(4).tolist()
        ([0, 3, 5], [0, 4])
    """
    lengths = np.atleast_1d(np.asarray(counted, dtype=np.int64))
    return np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)])


def delayed_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` as a lazy value (its arguments may be lazy values), named by what it computes
    (``pure``): the same call made twice in one graph runs once."""
    return dask.delayed(function, pure=True)(*args, **kwargs)
