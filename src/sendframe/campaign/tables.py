"""Contact tables as analysts have them: any frame that exports Arrow, as well as pandas.

    >>> import pandas as pd
    >>> as_frame(pd.DataFrame({"phone": ["34600123456"]})).shape
    (1, 1)
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from sendframe.errors import InputError

__all__ = ["as_frame"]


def as_frame(table: Any) -> pd.DataFrame:
    """``table`` as a pandas DataFrame: pandas as it is; polars, DuckDB, pyarrow (anything exporting Arrow) converted.

        >>> import pyarrow as pa
        >>> as_frame(pa.table({"phone": ["34600123456"]}))["phone"].tolist()
        ['34600123456']
    """
    if isinstance(table, pd.DataFrame):
        return table
    if isinstance(table, (pa.Table, pa.RecordBatch)):
        return table.to_pandas()
    if hasattr(table, "__arrow_c_stream__"):
        return pa.table(table).to_pandas()
    if hasattr(table, "to_arrow"):
        return as_frame(table.to_arrow())
    raise InputError(f"contacts must be a DataFrame (pandas, polars, DuckDB, pyarrow) or a file read with "
                     f"sendframe.read_contacts, not {type(table).__name__}.")
