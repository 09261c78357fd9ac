"""The rules sendframe keeps when it calls Dask (the optional ``sendframe[dask]`` stack).

Dask is imported with :mod:`sendframe.scale`, which :class:`~sendframe.scale.engine.DaskEngine` imports only
when a Dask frame is met (saying how to install Dask when it is missing), so the pandas path never pays for it.

    >>> row_offsets([3, 2]).tolist()
    [0, 3, 5]
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

__all__ = ["delayed_call", "from_pandas", "pandas_strings", "row_offsets"]


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
