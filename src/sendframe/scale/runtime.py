"""Dask, imported only when a Dask frame is met: the optional ``sendframe[dask]`` stack.

``is_dask_frame`` tells a Dask collection from anything else without importing Dask, so the
pandas path never pays for it; :func:`dask_dataframe` imports ``dask.dataframe`` on first use and,
when it is missing, says the exact command that installs it.

    >>> import pandas as pd
    >>> is_dask_frame(pd.DataFrame())
    False
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any, cast

import numpy as np
import pandas as pd

__all__ = ["INSTALL_HINT", "byte_ranges", "compute", "dask_dataframe", "delayed_call", "from_pandas", "is_dask_frame",
           "lengths_of", "meta_of", "on_distributed_cluster", "pandas_strings", "optimised", "persist", "row_offsets"]

INSTALL_HINT = "pip install 'sendframe[dask]'"


def is_dask_frame(value: object) -> bool:
    """Whether ``value`` is a Dask DataFrame or Series (checked by type, without importing Dask).

        >>> is_dask_frame([1, 2]), is_dask_frame(None)
        (False, False)
    """
    module = type(value).__module__ or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(value, "map_partitions")


def dask_dataframe() -> ModuleType:
    """``dask.dataframe``, or ImportError saying how to install it.

        >>> dask_dataframe().__name__  # doctest: +SKIP
        'dask.dataframe'
    """
    try:
        import dask.dataframe as dd  # noqa: PLC0415  the optional sendframe[dask] stack, imported on first use only
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise ImportError(f"Working on Dask frames needs dask[dataframe] and distributed: {INSTALL_HINT}") from exc
    return dd


def pandas_strings() -> AbstractContextManager[Any]:
    """A context in which Dask builds frames with pandas' own text dtype.

    By default (``dataframe.convert-string``) Dask turns every text column it reads or is given
    (``read_csv``, ``read_parquet``, ``from_pandas``) into ``string[pyarrow]``, whose missing value
    is ``pd.NA``, where pandas reads ``str`` (missing: ``nan``): comparisons and ``.str`` methods then
    answer other dtypes than pandas on the same rows. Frames sendframe reads or converts itself are
    built in this context, so a column is typed as the pandas reader types it; the choice is fixed
    when the frame is built (computing it later, in any context, keeps it).

        >>> with pandas_strings():  # doctest: +SKIP
        ...     frame = dask_dataframe().read_csv("contacts-*.csv", dtype=str)
    """
    dask_dataframe()
    import dask  # noqa: PLC0415  optional stack, imported on first use

    context: AbstractContextManager[Any] = dask.config.set({"dataframe.convert-string": False})
    return context


def from_pandas(frame: pd.DataFrame, npartitions: int = 1) -> Any:
    """A Dask frame of a pandas ``frame``, rows in their order and every column of the dtype it has
    (Dask's ``from_pandas`` would turn text columns into ``string[pyarrow]``: see :func:`pandas_strings`).

        >>> from_pandas(pd.DataFrame({"name": ["Ana", None]})).dtypes["name"]
        <StringDtype(na_value=nan)>
    """
    with pandas_strings():
        return dask_dataframe().from_pandas(frame, npartitions=npartitions, sort=False)


def compute(*collections: Any) -> tuple[Any, ...]:
    """``dask.compute`` of several collections in one pass over the data (shared reads run once).

        >>> compute()  # doctest: +SKIP
        ()
    """
    dask_dataframe()
    from dask.base import compute as dask_compute  # noqa: PLC0415  optional stack, imported on first use

    # dask.base is untyped: its compute answers a tuple with one result per collection
    return cast(Callable[..., tuple[Any, ...]], dask_compute)(*collections)


def persist(collection: Any) -> Any:
    """``dask.persist``: the work starts now (in the background on a distributed cluster) and its
    result stays on the workers for the collections built on it.

        >>> persist(frame)  # doctest: +SKIP
    """
    dask_dataframe()
    from dask.base import persist as dask_persist  # noqa: PLC0415  optional stack, imported on first use

    # dask.base is untyped: its persist answers a tuple with one collection per collection given
    (persisted,) = cast(Callable[..., tuple[Any, ...]], dask_persist)(collection)
    return persisted


def on_distributed_cluster() -> bool:
    """Whether Dask computes on a distributed cluster (a ``distributed.Client`` is the scheduler), where a
    persisted result stays on the workers; otherwise it computes in this process (threads or processes).

        >>> on_distributed_cluster()  # doctest: +SKIP
        False
    """
    dask_dataframe()
    from dask.base import get_scheduler  # noqa: PLC0415  optional stack, imported on first use

    # dask.base is untyped: a distributed Client as the scheduler is its bound get method
    owner = getattr(cast(Callable[[], Any], get_scheduler)(), "__self__", None)
    return type(owner).__module__.startswith("distributed.")


def meta_of(frame: Any) -> pd.DataFrame:
    """The empty pandas frame a Dask DataFrame's partitions look like (its ``meta``: columns and dtypes).

        >>> import dask.dataframe as dd  # doctest: +SKIP
        >>> meta_of(dd.from_pandas(pd.DataFrame({"phone": ["1"]}), npartitions=1)).columns.tolist()  # doctest: +SKIP
        ['phone']
    """
    dask_dataframe()
    from dask.dataframe.dispatch import make_meta  # noqa: PLC0415  optional stack, imported on first use

    # dask.dataframe.dispatch is untyped: make_meta of a Dask DataFrame is its pandas meta
    return cast(Callable[[Any], pd.DataFrame], make_meta)(frame)


def optimised(frame: Any) -> Any:
    """``frame`` with its partitions fixed: Dask may fuse the partitions of a Parquet read when
    only some columns are used, so the work that must pair partitions runs on the optimised frame.

        >>> optimised(frame).npartitions  # doctest: +SKIP
    """
    return frame.optimize() if hasattr(frame, "optimize") else frame


def lengths_of(frame: Any) -> Any:
    """A lazy Series of each partition's row count (on the frame's own partitions, never a projection).

        >>> compute(lengths_of(frame))  # doctest: +SKIP
    """
    return frame.map_partitions(len, meta=(None, "int64"), enforce_metadata=False)


def row_offsets(counted: Any) -> np.ndarray:
    """Where each partition's rows start in the whole frame, then the total, from the computed
    :func:`lengths_of` (for one partition Dask answers a bare number).

        >>> row_offsets([3, 2]).tolist(), row_offsets(4).tolist()
        ([0, 3, 5], [0, 4])
    """
    lengths = np.atleast_1d(np.asarray(counted, dtype=np.int64))
    return np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)])


def byte_ranges(path: str, blocksize: int) -> list[Any]:
    """The bytes of a plain file in ranges of about ``blocksize``, as lazy values (``dask.bytes.read_bytes``):
    each range starts after a line break and ends on one, so every line is in exactly one range.

        >>> [len(block.compute()) for block in byte_ranges("callbacks.log", 64 << 20)]  # doctest: +SKIP
        [67108912, 67108790, 3210]
    """
    dask_dataframe()
    from dask.bytes.core import read_bytes  # noqa: PLC0415  optional stack, imported on first use

    # dask.bytes is untyped: with sample=False it answers (False, [[one lazy value per range] per file])
    _, (blocks,) = cast(Callable[..., tuple[Any, list[list[Any]]]], read_bytes)(
        path, delimiter=b"\n", blocksize=blocksize, sample=False)
    return blocks


def delayed_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``dask.delayed(function)(*args, **kwargs)``: the call as a lazy value (its arguments may be lazy values).

        >>> delayed_call(len, [1, 2]).compute()  # doctest: +SKIP
        2
    """
    dask_dataframe()
    from dask.delayed import delayed  # noqa: PLC0415  optional stack, imported on first use

    return delayed(function, pure=True)(*args, **kwargs)
