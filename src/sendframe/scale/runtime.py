"""Dask, imported only when a Dask frame is met: the optional ``sendframe[dask]`` stack.

``is_dask_frame`` tells a Dask collection from anything else without importing Dask, so the
pandas path never pays for it; :func:`dask_dataframe` imports ``dask.dataframe`` on first use and,
when it is missing, says the exact command that installs it.

    >>> import pandas as pd
    >>> is_dask_frame(pd.DataFrame())
    False
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

__all__ = ["INSTALL_HINT", "dask_dataframe", "is_dask_frame", "partition_lengths"]

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


def partition_lengths(frame: Any) -> list[int]:
    """The number of rows of each partition of a Dask frame (reads the data once, keeping only counts).

        >>> import pandas as pd, dask.dataframe as dd  # doctest: +SKIP
        >>> partition_lengths(dd.from_pandas(pd.DataFrame({"a": range(5)}), npartitions=2))  # doctest: +SKIP
        [3, 2]
    """
    columns = list(frame.columns[:1]) if hasattr(frame, "columns") and len(frame.columns) else None
    counted = frame[columns] if columns else frame
    (lengths,) = compute(counted.map_partitions(len, meta=(None, "int64")))
    return [int(n) for n in lengths]


def cpu_workers() -> int:
    """Worker processes a LocalCluster should start here (at least 1, at most the cores).

        >>> cpu_workers() >= 1
        True
    """
    return max(1, min(2, os.cpu_count() or 1))
