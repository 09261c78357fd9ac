"""Dask, imported only when a Dask frame is met: the optional ``sendframe[dask]`` stack.

``is_dask_frame`` tells a Dask collection from anything else without importing Dask, so the
pandas path never pays for it; the other functions import Dask on first use (:func:`dask_module`
says the exact command that installs it when it is missing). Dask is untyped: each answer is typed here.

    >>> import pandas as pd
    >>> is_dask_frame(pd.DataFrame())
    False
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["compute", "dask_module", "delayed_call", "from_pandas", "is_dask_frame", "meta_of", "optimised",
           "pandas_strings", "persist", "row_offsets"]


def is_dask_frame(value: object) -> bool:
    """Whether ``value`` is a Dask DataFrame or Series (checked by type, without importing Dask).

        >>> is_dask_frame([1, 2]), is_dask_frame(None)
        (False, False)
    """
    module = type(value).__module__ or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(value, "map_partitions")


def dask_module(name: str) -> ModuleType:
    """A module of the optional Dask stack (``dask.dataframe``, ...), imported on first use, or ImportError saying
    how to install it.

        >>> dask_module("dask.dataframe").__name__  # doctest: +SKIP
        'dask.dataframe'
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise ImportError("Working on Dask frames needs dask[dataframe] and distributed: "
                          "pip install 'sendframe[dask]'") from exc


def pandas_strings() -> AbstractContextManager[Any]:
    """A context in which Dask builds frames with pandas' own text dtype.

    By default (``dataframe.convert-string``) Dask turns every text column it reads or is given
    (``read_csv``, ``read_parquet``, ``from_pandas``) into ``string[pyarrow]``, whose missing value
    is ``pd.NA``, where pandas reads ``str`` (missing: ``nan``): comparisons and ``.str`` methods then
    answer other dtypes than pandas on the same rows. Frames sendframe reads or converts itself are
    built in this context, so a column is typed as the pandas reader types it; the choice is fixed
    when the frame is built (computing it later, in any context, keeps it).

        >>> with pandas_strings():  # doctest: +SKIP
        ...     frame = dask_module("dask.dataframe").read_csv("contacts-*.csv", dtype=str)
    """
    context: AbstractContextManager[Any] = dask_module("dask").config.set({"dataframe.convert-string": False})
    return context


def from_pandas(frame: pd.DataFrame, npartitions: int = 1) -> Any:
    """A Dask frame of a pandas ``frame``, rows in their order and every column of the dtype it has
    (Dask's ``from_pandas`` would turn text columns into ``string[pyarrow]``: see :func:`pandas_strings`).

        >>> from_pandas(pd.DataFrame({"name": ["Ana", None]})).dtypes["name"]
        <StringDtype(na_value=nan)>
    """
    with pandas_strings():
        return dask_module("dask.dataframe").from_pandas(frame, npartitions=npartitions, sort=False)


def compute(*collections: Any) -> tuple[Any, ...]:
    """``dask.compute`` of several collections in one pass over the data (shared reads run once): one result each."""
    computed: tuple[Any, ...] = dask_module("dask").compute(*collections)
    return computed


def persist(collection: Any) -> Any:
    """``dask.persist``: the work starts now (in the background on a distributed cluster) and its
    result stays on the workers for the collections built on it."""
    return dask_module("dask").persist(collection)[0]


def meta_of(frame: Any) -> pd.DataFrame:
    """The empty pandas frame a Dask DataFrame's partitions look like (its ``meta``: columns and dtypes)."""
    meta: pd.DataFrame = dask_module("dask.dataframe.dispatch").make_meta(frame)
    return meta


def optimised(frame: Any) -> Any:
    """``frame`` with its partitions fixed: Dask may fuse the partitions of a Parquet read when
    only some columns are used, so the work that must pair partitions runs on the optimised frame."""
    return frame.optimize() if hasattr(frame, "optimize") else frame


def row_offsets(counted: Any) -> np.ndarray:
    """Where each partition's rows start in the whole frame, then the total, from the computed lengths of its
    partitions (for one partition Dask answers a bare number).

        >>> row_offsets([3, 2]).tolist(), row_offsets(4).tolist()
        ([0, 3, 5], [0, 4])
    """
    lengths = np.atleast_1d(np.asarray(counted, dtype=np.int64))
    return np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)])


def delayed_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``dask.delayed(function)(*args, **kwargs)``: the call as a lazy value (its arguments may be lazy values)."""
    return dask_module("dask.delayed").delayed(function, pure=True)(*args, **kwargs)
