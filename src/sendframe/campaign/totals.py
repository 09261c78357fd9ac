"""The totals of an estimate frame, as sums over rows that add up across a frame's parts.

:func:`sendframe.estimate_totals` of a pandas frame is :func:`totals_of_sums` of its :func:`estimate_sums`;
of a Dask frame, of its partitions' sums added up (:mod:`sendframe.scale.frames`), so both answer alike.
Imports nothing of sendframe but the encodings' names: the Dask layer reads it without a cycle.

    >>> import pandas as pd
    >>> from sendframe.campaign.estimate import estimate
    >>> totals_of_sums(estimate_sums(estimate(pd.DataFrame({"phone": ["34600123456"]}), "Hi")), "EUR")["rows"]
    1
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from sendframe.text.encodings import ENCODINGS

__all__ = ["estimate_sums", "totals_of_sums"]


def estimate_sums(frame: pd.DataFrame) -> dict[str, int | float]:
    """The counts and cost behind :func:`sendframe.estimate_totals`, each a sum over rows (the sums of a frame's
    parts add up to the frame's); the rows per encoding under ``encoding:<name>``.

        >>> from sendframe.campaign.estimate import estimate
        >>> sums = estimate_sums(estimate(pd.DataFrame({"phone": ["34600123456"]}), "Hi"))
        >>> sums["messages"], sums["encoding:gsm"]
        (1, 1)
    """
    billable = frame["billable"].to_numpy(dtype=bool)
    parts = frame["parts"].fillna(0).to_numpy(dtype=np.int64)
    counts = frame["encoding"].value_counts(dropna=True)
    return {
        "rows": len(frame), "billable": int(billable.sum()), "messages": int(parts[billable].sum()),
        "cost": float(frame["cost"].sum()),
        "rows_losing_characters": int(frame["lost_characters"].fillna("").str.len().gt(0).sum()),
        "too_many_parts": int(frame["too_many_parts"].sum()), "missing_text": int(frame["text"].isna().sum()),
        **{f"encoding:{name}": int(counts.get(name, 0)) for name in ENCODINGS},
    }


def totals_of_sums(sums: Mapping[str, Any], currency: str) -> dict[str, Any]:
    """:func:`sendframe.estimate_totals` from :func:`estimate_sums` (of one frame, or added up over its parts).

        >>> sums = {"rows": 3, "billable": 2, "messages": 4, "cost": 0.123456, "rows_losing_characters": 0,
        ...         "too_many_parts": 0, "missing_text": 1, "encoding:gsm": 1, "encoding:utf-16": 2}
        >>> totals = totals_of_sums(sums, "EUR"); totals["cost"], totals["encodings"]
        (0.1235, {'utf-16': 2, 'gsm': 1})
    """
    encodings = {name: int(sums[f"encoding:{name}"]) for name in ENCODINGS if int(sums.get(f"encoding:{name}", 0))}
    return {
        "rows": int(sums["rows"]), "billable": int(sums["billable"]), "messages": int(sums["messages"]),
        "cost": round(float(sums["cost"]), 4), "currency": currency,
        "encodings": dict(sorted(encodings.items(), key=lambda item: -item[1])),
        "rows_losing_characters": int(sums["rows_losing_characters"]),
        "too_many_parts": int(sums["too_many_parts"]), "missing_text": int(sums["missing_text"]),
    }
