"""Dask, imported only when a Dask frame is met: the optional ``sendframe[dask]`` stack.

``is_dask_frame`` tells a Dask collection from anything else without importing Dask, so the
pandas path never pays for it; :func:`dask_dataframe` imports ``dask.dataframe`` on first use and,
when it is missing, says the exact command that installs it.

    >>> import pandas as pd
    >>> is_dask_frame(pd.DataFrame())
    False
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["INSTALL_HINT", "compute", "dask_dataframe", "is_dask_frame", "lengths_of", "persist", "settled"]

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
        import dask.dataframe as dd  # the optional stack: imported on first use only
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise ImportError(f"Working on Dask frames needs dask[dataframe] and distributed: {INSTALL_HINT}") from exc
    return dd


def compute(*collections: Any) -> tuple[Any, ...]:
    """``dask.compute`` of several collections in one pass over the data (shared reads run once).

        >>> compute()  # doctest: +SKIP
        ()
    """
    dask_dataframe()
    import dask

    return dask.compute(*collections)  # type: ignore[no-any-return]


def persist(collection: Any) -> Any:
    """``dask.persist``: the work starts now (in the background on a distributed cluster) and its
    result stays on the workers for the collections built on it.

        >>> persist(frame)  # doctest: +SKIP
    """
    dask_dataframe()
    import dask

    (persisted,) = dask.persist(collection)
    return persisted


def settled(frame: Any) -> Any:
    """``frame`` with its partitions fixed: Dask may fuse the partitions of a Parquet read when
    only some columns are used, so the work that must pair partitions runs on the optimised frame.

        >>> settled(frame).npartitions  # doctest: +SKIP
    """
    return frame.optimize() if hasattr(frame, "optimize") else frame


def lengths_of(frame: Any) -> Any:
    """A lazy Series of each partition's row count (on the frame's own partitions, never a projection).

        >>> compute(lengths_of(frame))  # doctest: +SKIP
    """
    return frame.map_partitions(len, meta=(None, "int64"), enforce_metadata=False)
