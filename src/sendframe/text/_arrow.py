"""Conversions between pandas Series and pyarrow arrays used by the vectorised text functions."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

TEXT = pa.large_string()


def series_to_arrow(series: pd.Series) -> pa.Array:
    """Return the text of ``series`` as one large_string pyarrow array (missing values -> null).

    Only strings are accepted as text; anything else in the series raises ``TypeError``.
    """
    values = series.array
    # from_pandas: NaN, None and pd.NA become null
    arr = pa.array(values) if hasattr(values, "__arrow_array__") else pa.array(series, from_pandas=True)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), TEXT)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        raise TypeError(f"expected a Series of text, got values of type {arr.type}")
    return arr.cast(TEXT)


def text_series(arr: pa.Array, index: pd.Index, name: object = None) -> pd.Series:
    """Wrap a pyarrow text array as a pandas ``string`` Series (missing = <NA>) on ``index``."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(TEXT)
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([arr])), index=index, name=name)


def int_series(values: np.ndarray, missing: np.ndarray, index: pd.Index, name: object = None) -> pd.Series:
    """Wrap int64 ``values`` (with a boolean ``missing`` mask) as an ``Int64`` Series on ``index``."""
    array = pd.arrays.IntegerArray(np.asarray(values, dtype=np.int64), np.asarray(missing, dtype=bool))
    return pd.Series(array, index=index, name=name)


def map_unique(arr: pa.Array, func: Callable[[str], str]) -> pa.Array:
    """Apply a scalar ``func`` once per distinct value of a text array (nulls stay null).

    Campaign columns repeat (names, cities, amounts): dictionary-encoding and mapping the
    distinct values gives exactly the scalar answers at a fraction of the per-row cost.
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    encoded = pc.dictionary_encode(arr)
    mapped = pa.array([func(v) for v in encoded.dictionary.to_pylist()], type=TEXT)
    return pc.take(mapped, encoded.indices)


def is_all_ascii(arr: pa.Array) -> bool:
    """True when every non-null value of a text array is pure ASCII."""
    return bool(pc.all(pc.string_is_ascii(arr), skip_nulls=True).as_py() is not False)


def regex_class(chars: str, negate: bool = False) -> str:
    """An RE2 character class matching any of ``chars`` (every char written as ``\\x{HEX}``)."""
    body = "".join(f"\\x{{{ord(c):X}}}" for c in sorted(set(chars)))
    return f"[{'^' if negate else ''}{body}]"
