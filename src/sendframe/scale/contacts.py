"""Contact tables past one machine's memory: a large CSV, a glob of CSVs or a Parquet dataset as a Dask frame.

``read_contacts(source, dask=True)`` comes here (through :mod:`sendframe.engines`); so does ``dask=None``
(the default) when the source is more than one file (a folder, a glob, a list) or one file larger than
:data:`sendframe.campaign.contacts.LARGE_FILE_BYTES`. Each partition is normalised by the pandas
``read_contacts`` itself; the ``duplicate`` flag, which spans rows, is settled across partitions by a shuffle on the
recipient (:mod:`sendframe.scale.partitions`); and rows are labelled by their position in the whole
table (0, 1, ...; the divisions are known), as the pandas reader labels them. Counting the rows
of each partition reads one column once before the frame is returned; everything else is lazy.

    >>> contacts = sendframe.read_contacts("contacts/*.csv", dask=True)  # doctest: +SKIP
    >>> contacts.npartitions, len(contacts)  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.dataframe.dispatch import make_meta

from sendframe.api.recipient_columns import recipient_keys
from sendframe.engines import named_files
from sendframe.errors import InputError
from sendframe.scale.partitions import candidates, local_positions, pandas_strings, repeated_rows, row_offsets

__all__ = ["PARTITION_BYTES", "read_partitioned"]

PARTITION_BYTES = 64 * 1024 * 1024
"""CSV bytes per partition (Parquet files are split by their row groups, as Dask does)."""
_PARQUET = (".parquet", ".parq", ".pq")


def _raw_frame(source: Any, read_options: dict[str, Any]) -> Any:
    if isinstance(source, dd.DataFrame):
        if read_options:
            raise InputError(f"read options ({', '.join(read_options)}) apply to files, not to a Dask frame.")
        return source
    paths = named_files(source, "contacts file", (*_PARQUET, ".csv"))
    kinds = {Path(p).suffix.lower() in _PARQUET for p in paths}
    if len(kinds) > 1:
        raise InputError("The contacts source mixes Parquet and CSV files; read each kind on its own.")
    if any(Path(p).suffix.lower() in (".xlsx", ".xls", ".ods") for p in paths):
        raise InputError("Spreadsheets are read whole: read_contacts(..., dask=False), or save them as CSV or Parquet.")
    # as the pandas reader: text as written (leading zeros kept), only empty cells missing, typed str
    options = {"dtype": str, "encoding": "utf-8-sig", "keep_default_na": False, "na_values": [""],
               "blocksize": PARTITION_BYTES, **read_options}
    with pandas_strings():
        return dd.read_parquet(paths, **read_options) if kinds == {True} else dd.read_csv(paths, **options)


def _recipient_keys(part: pd.DataFrame) -> pd.DataFrame:
    """Candidates of the ``duplicate`` flag: valid recipients by their ``recipient_keys`` (as read_contacts compares).

    ``part`` is read_contacts' answer, so its recipients are in the canonical ``phone`` and ``email``
    columns whatever the source called them (``Mobile``, ``E-mail``, ...).

        >>> part = pd.DataFrame({"phone": ["34600123456", None], "phone_valid": [True, False]})
        >>> _recipient_keys(part)["key"].tolist()
        ['p:34600123456']
    """
    kinds = [kind for kind in ("phone", "email") if kind in part]  # one at least: read_contacts refuses a table of none
    return pd.concat([candidates(kind[0] + ":" + recipient_keys(part[kind], kind, default_region=None),
                                 part[f"{kind}_valid"].to_numpy(dtype=bool), part.index) for kind in kinds])


def _finished(part: pd.DataFrame, repeats: pd.DataFrame, read: Callable[..., pd.DataFrame], options: dict[str, Any],
              offsets: Sequence[int], partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    out = read(part, **options)
    out.index = pd.RangeIndex(offsets[number], offsets[number] + len(out))
    out["duplicate"] = np.isin(np.arange(len(out)), local_positions(repeats.index.to_numpy()))
    return out


def read_partitioned(read_contacts: Callable[..., pd.DataFrame], source: Any, **given: Any) -> Any:
    """``read_contacts`` of a large source as a Dask frame (see the module docstring).

    ``given``: the options of ``read_contacts`` (with their defaults, as the engine passes them) and the read
    options, which go to ``dask.dataframe.read_csv`` (``blocksize``, ``sep``, ...) or ``read_parquet``.

        >>> contacts = read_partitioned(sendframe.read_contacts, "contacts.parquet")  # doctest: +SKIP
    """
    own = inspect.signature(read_contacts).parameters
    options = {name: value for name, value in given.items() if name in own}
    raw = _raw_frame(source, {name: value for name, value in given.items() if name not in own}).optimize()
    meta = read_contacts(make_meta(raw), **options)  # a table without a recipient column fails here, at once
    meta.index = pd.RangeIndex(0)
    # the source columns read_contacts found (Mobile, E-mail, ...), named exactly, so the candidates of
    # the duplicate flag read those columns alone and find them under the canonical phone / email
    sources: dict[str, str] = dict(meta.attrs.get("recipient_columns", {}))
    country = meta.attrs.get("row_regions", {}).get("column")  # each row's region for its national numbers
    pick_options = {**options, "phone_column": sources.get("phone"), "email_column": sources.get("email"),
                    "country_column": country}
    recipients = [*sources.values(), *([country] if country else [])]
    # one pass now: each partition's length (for labels 0, 1, ... across the table) and the repeats, kept
    (repeats,) = dask.persist(repeated_rows(raw, lambda part: _recipient_keys(read_contacts(part[recipients],
                                                                                           **pick_options))))
    lengths = raw.map_partitions(len, meta=(None, "int64"), enforce_metadata=False)  # on the frame's own partitions
    offsets = row_offsets(dask.compute(lengths)[0]).tolist()
    done = raw.map_partitions(_finished, repeats, read_contacts, options, offsets, meta=meta, align_dataframes=False,
                              enforce_metadata=False)
    known = (np.diff(offsets) > 0).all()  # an empty partition: the divisions would not increase
    return dd.from_delayed(done.to_delayed(), meta=meta, divisions=(*offsets[:-1], offsets[-1] - 1) if known else None,
                           verify_meta=False)
