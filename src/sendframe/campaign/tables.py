"""Contact tables as analysts have them: files of the usual formats, and frames of any Arrow library.

:func:`read_table` reads a file into a pandas frame whose every column is text (``str``, Arrow-backed),
so leading zeros, long numbers and ``n/a`` survive as typed:

- CSV (any extension; ``.csv``, ``.txt``, ``.tsv``): the encoding and the delimiter are worked out as
  described below, then the file is parsed by ``pyarrow.csv`` (both cores), pandas when pyarrow cannot
  (short rows, odd quoting);
- Excel ``.xlsx`` / ``.xlsm`` / ``.xls`` and OpenDocument ``.ods``, first sheet unless ``sheet_name=``,
  through pandas' ``calamine`` engine;
- Parquet and Arrow IPC (Feather) files; JSON lines (``.jsonl``, ``.ndjson``; a ``.json`` array of objects).

The format is recognised from the file's first bytes (a Parquet file named ``.csv`` still reads), else
from its extension. A file that cannot be read raises :class:`~sendframe.errors.InputError` naming the
file and what was tried, never a decoder's traceback.

Encoding, in this order: a byte-order mark (UTF-8, UTF-16, UTF-32); NUL bytes at every other position
(UTF-16 without a mark); valid UTF-8; else cp1252 (what Excel writes as "CSV" on Windows) when every byte
is defined there, else latin-1. No statistical guesser (chardet, charset-normalizer) is used: on the short
Western European samples contact tables are, they name cp1250 or mac-roman for cp1252 text, while these
rules are exact for the encodings spreadsheets write. NUL or control bytes that fit no text encoding
mean the file is not text: a plain error says so. ``encoding=`` overrides the guess.

Delimiter: the first of ``,`` ``;`` tab ``|`` that splits the header and the first rows into the same
number of fields (more than one), the one giving most fields when several do. Unlike ``csv.Sniffer``,
which weighs character frequencies, this is not fooled by decimal commas (``12,50`` in a ``;`` file) or
commas inside quoted text. ``sep=`` overrides it.

:func:`as_frame` takes pandas frames as they are, and converts anything that exports Arrow: pyarrow
tables and record batches, polars frames, DuckDB relations, any object with ``__arrow_c_stream__`` or
``to_arrow()``.

    >>> import pandas as pd
    >>> as_frame(pd.DataFrame({"phone": ["600123456"]})).columns.tolist()
    ['phone']
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import mmap
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.feather as feather
import pyarrow.parquet as pq

from sendframe.errors import InputError
from sendframe.options import check_options

__all__ = ["READ_OPTIONS", "as_frame", "read_table"]

READ_OPTIONS: tuple[str, ...] = ("sep", "delimiter", "encoding", "sheet_name")
_DELIMITERS = (",", ";", "\t", "|")
_CSV = (".csv", ".tsv", ".txt", ".tab")
_SAMPLE_BYTES = 1 << 20
_EXCEL = (".xlsx", ".xlsm", ".xls", ".xlsb", ".ods")
_MAGIC = {b"PAR1": "parquet", b"PK\x03\x04": "spreadsheet", b"\xd0\xcf\x11\xe0": "spreadsheet", b"ARROW1": "arrow",
          b"\x1f\x8b": "gzip", b"%PDF": "pdf"}
_BY_SUFFIX = {".parquet": "parquet", ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow",
              **dict.fromkeys(_EXCEL, "spreadsheet")}
# the formats a library reads whole: what an error calls each, and its reader (file, sheet) -> table or frame
_BINARY_READERS: dict[str, tuple[str, Any]] = {
    "parquet": ("Parquet", lambda file, sheet: pq.read_table(file)),
    "arrow": ("Arrow IPC (Feather)", lambda file, sheet: feather.read_table(file)),
    "spreadsheet": ("a spreadsheet (Excel .xlsx/.xls or OpenDocument .ods, sheet {sheet!r})",
                    lambda file, sheet: pd.read_excel(file, sheet_name=sheet, engine="calamine", dtype=str,
                                                      keep_default_na=False, na_values=[""])),
}
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_TEXT_CONTROLS = frozenset(b"\t\n\r\x0c\x1a")


def read_table(path: str | os.PathLike[str], **options: Any) -> pd.DataFrame:
    """Read a contact table file into a frame of text columns (see the module docstring for formats).

    Options: ``sep`` (or ``delimiter``) and ``encoding`` for CSV and JSON lines, ``sheet_name`` (name or
    position) for spreadsheets. Anything else is refused with a did-you-mean.

        >>> read_table("data/contacts.csv").dtypes.unique().tolist()  # doctest: +SKIP
        [<StringDtype(na_value=nan)>]
    """
    check_options(options, READ_OPTIONS, "read_table")
    file = Path(path)
    if not file.is_file():
        raise InputError(f"The contacts file {str(file)!r} does not exist." if not file.exists()
                         else f"{str(file)!r} is a folder, not a contacts file.")
    sep = options.get("sep", options.get("delimiter"))
    if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
        raise InputError(f"sep must be one character such as ',' or ';', not {sep!r}.")
    encoding = options.get("encoding")
    if encoding is not None:
        try:
            encoding = codecs.lookup(encoding).name
        except (LookupError, TypeError):
            raise InputError(f"{encoding!r} is not an encoding Python knows (try 'utf-8', 'cp1252' or "
                             "'latin-1').") from None
    with file.open("rb") as handle:
        head = handle.read(_SAMPLE_BYTES)
    suffix = file.suffix.lower()
    kind = next((k for magic, k in _MAGIC.items() if head.startswith(magic)), _BY_SUFFIX.get(suffix))
    if kind in _BINARY_READERS:
        return _binary(file, kind, options.get("sheet_name", 0))
    if kind in ("gzip", "pdf"):
        what = "a compressed (gzip) file: unpack it first" if kind == "gzip" else "a PDF document"
        raise InputError(f"{file.name} is {what}; contacts are read from CSV, Excel, ODS, Parquet or JSON lines files.")
    encoding = encoding or _guess_encoding(head, file)
    try:
        sample = codecs.getincrementaldecoder(encoding)().decode(head, final=len(head) < _SAMPLE_BYTES)
    except UnicodeDecodeError as error:
        raise _undecodable(file, encoding, error) from None
    if suffix in (".jsonl", ".ndjson", ".json") or (suffix not in _CSV and sample.lstrip()[:1] in ("{", "[")):
        return _json_lines(file, encoding)
    return _csv(file, encoding, sep, sample, explicit_encoding="encoding" in options)


# ---- encodings -----------------------------------------------------------------------------------

def _guess_encoding(head: bytes, file: Path) -> str:
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    if b"\x00" in head:
        even, odd = head[0::2].count(0), head[1::2].count(0)
        half = max(len(head) // 2, 1)
        if odd > 0.3 * half and even < 0.02 * half:
            return "utf-16-le"
        if even > 0.3 * half and odd < 0.02 * half:
            return "utf-16-be"
        raise InputError(f"{file.name} is not a text table: it holds binary data (NUL bytes). Tried: Parquet, "
                         "Excel/ODS and Arrow signatures, UTF-16. Save it as CSV, Excel, ODS, Parquet or JSON lines.")
    controls = sum(1 for byte in head[:65536] if byte < 32 and byte not in _TEXT_CONTROLS)
    if controls > 0.01 * min(len(head), 65536):
        raise InputError(f"{file.name} is not a text table: {controls} control bytes in its first 64 KB. "
                         "Save it as CSV, Excel, ODS, Parquet or JSON lines.")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        return _single_byte(head)


def _single_byte(data: bytes) -> str:
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:  # bytes cp1252 leaves undefined (0x81, 0x8d, ...): latin-1 reads any byte
        return "latin-1"
    return "cp1252"


def _undecodable(file: Path, encoding: str, error: UnicodeDecodeError, tried: str = "") -> InputError:
    # the plain error for bytes the encoding cannot read, never the decoder's traceback
    byte = error.object[error.start:error.start + 1]
    return InputError(f"{file.name} cannot be read as {encoding}: byte {error.start} ({byte!r}) is not valid there"
                      f"{f' (tried {tried})' if tried else ''}. Pass encoding='cp1252' or 'latin-1', or save the file "
                      "as UTF-8.")


# ---- CSV -----------------------------------------------------------------------------------------

def _records(sample: str, delimiter: str, complete: bool) -> list[list[str]]:
    # the first rows of the sample (at most 200, from its first 64 KB) split by delimiter
    complete = complete and len(sample) <= 65536
    rows = list(itertools.islice(csv.reader(io.StringIO(sample[:65536]), delimiter=delimiter), 201))
    if (not complete or len(rows) > 200) and len(rows) > 1:
        rows = rows[:-1]  # the last one may be cut in the middle
    return [row for row in rows if row]


def _guess_delimiter(sample: str, complete: bool) -> str:
    def fields(delimiter: str) -> int:  # the fields of every row, when they all have as many (else 1)
        try:
            sizes = {len(row) for row in _records(sample, delimiter, complete)}
        except csv.Error:
            return 1
        return sizes.pop() if len(sizes) == 1 else 1

    return max(_DELIMITERS, key=fields)  # the first of the most fields: "," when none splits the rows


def _unique_names(names: list[str]) -> list[str]:
    # as pandas names them: "Unnamed: 3" for an empty header, "name.1" for a repeated one
    out: dict[str, None] = {}
    for position, given in enumerate(names):
        base = name = given or f"Unnamed: {position}"
        count = 0
        while name in out:
            count += 1
            name = f"{base}.{count}"
        out[name] = None
    return list(out)


def _csv(file: Path, encoding: str, sep: str | None, sample: str, *, explicit_encoding: bool) -> pd.DataFrame:
    complete = file.stat().st_size <= _SAMPLE_BYTES
    delimiter = sep or _guess_delimiter(sample, complete)
    try:
        header = next(iter(_records(sample, delimiter, True)), [])
    except csv.Error as error:
        raise InputError(f"{file.name}: the header line cannot be read as CSV with delimiter {delimiter!r}: "
                         f"{error}.") from None
    if not header:
        raise InputError(f"{file.name} is empty: it has no header line naming the columns.")
    # newlines inside values cost Arrow's reader about half again: allowed only where a value may be quoted
    parse = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=_quoted_after_header(file, encoding))
    convert = pacsv.ConvertOptions(column_types=dict.fromkeys(header, pa.string()), null_values=[""],
                                   strings_can_be_null=True, quoted_strings_can_be_null=True)
    arrow_encoding = "utf8" if encoding in ("utf-8", "utf-8-sig") else encoding
    try:
        table = pacsv.read_csv(file, read_options=pacsv.ReadOptions(encoding=arrow_encoding), parse_options=parse,
                               convert_options=convert)
    except pa.ArrowInvalid as error:
        if "UTF8" in str(error) and encoding == "utf-8" and not explicit_encoding:
            encoding = _single_byte(file.read_bytes())  # valid UTF-8 at the start only
            return _csv(file, encoding, delimiter, sample, explicit_encoding=True)
        table = None
    except UnicodeDecodeError as error:
        raise _undecodable(file, encoding, error) from None
    if table is not None and table.column_names == header:  # each column named in column_types: text
        frame: pd.DataFrame = table.rename_columns(_unique_names(header)).to_pandas()  # text columns: str
        return frame
    return _pandas_csv(file, encoding, delimiter)


def _quoted_after_header(file: Path, encoding: str) -> bool:
    """Whether a quote may open a value after the header line (then a value may hold a newline). Read by
    ``mmap`` without loading the file; an encoding that does not write ``"`` and newlines as ASCII says True."""
    if '"\n'.encode(encoding, errors="replace") != b'"\n' or file.stat().st_size == 0:
        return True
    try:
        with file.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return data.find(b'"', max(data.find(b"\n"), 0)) >= 0
    except (OSError, ValueError):  # a file system without mmap: the careful way
        return True


def _pandas_csv(file: Path, encoding: str, delimiter: str) -> pd.DataFrame:
    # short rows, odd quoting: pandas reads what pyarrow refuses; its errors are restated plainly
    tried = f"delimiter {delimiter!r}, encoding {encoding}"
    try:
        return pd.read_csv(file, sep=delimiter, encoding=encoding, dtype=str, keep_default_na=False, na_values=[""])
    except UnicodeDecodeError as error:
        raise _undecodable(file, encoding, error, tried) from None
    except (pd.errors.ParserError, ValueError, csv.Error) as error:
        found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(error))
        if found:
            expected, line, saw = found.groups()
            raise InputError(f"{file.name}: line {line} has {saw} fields where the header has {expected} (tried "
                             f"{tried}). Check that line's quoting, or pass sep= if the delimiter is another."
                             ) from None
        reason = str(error).strip().splitlines()[-1]
        raise InputError(f"{file.name} cannot be read as CSV ({tried}): {reason}.") from None


# ---- JSON lines, spreadsheets, Arrow files -----------------------------------------------------------

def _json_text(value: object) -> str | None:
    # a value as JSON writes it (true, 12.5, ["vip"]); text as it is
    return value if value is None or isinstance(value, str) else orjson.dumps(value).decode()


def _json_lines(file: Path, encoding: str) -> pd.DataFrame:
    try:
        text = file.read_bytes().decode(encoding)
    except UnicodeDecodeError as error:
        raise _undecodable(file, encoding, error) from None
    if text.lstrip().startswith("["):
        try:
            numbered = list(enumerate(orjson.loads(text), start=1))
        except orjson.JSONDecodeError as error:
            raise InputError(f"{file.name} is not valid JSON: {error.msg} at line {error.lineno}.") from None
    else:
        numbered = []
        for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 may sit in a string
            if line.strip():
                try:
                    numbered.append((number, orjson.loads(line)))
                except orjson.JSONDecodeError as error:
                    raise InputError(f"{file.name}: line {number} is not valid JSON ({error}); JSON lines files hold "
                                     "one object per line.") from None
    for number, record in numbered:
        if not isinstance(record, dict):
            raise InputError(f"{file.name}: record {number} is {type(record).__name__}, not an object with named "
                             "fields.")
    records = pd.DataFrame([record for _, record in numbered], dtype=object)  # columns in order of first appearance
    return records.map(_json_text, na_action="ignore").astype("str")


def _binary(file: Path, kind: str, sheet: Any) -> pd.DataFrame:
    what, reader = _BINARY_READERS[kind]
    try:
        table = reader(file, sheet)
    except Exception as error:  # pyarrow and calamine (dependencies) raise their own types for damaged files
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{file.name} cannot be read as {what.format(sheet=sheet)}: {message}.") from None
    return _text_frame(table) if isinstance(table, pa.Table) else table.astype("str")


def _column_text(column: pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    kind = column.type
    if pa.types.is_dictionary(kind):
        return _column_text(pc.cast(column, kind.value_type))
    if pa.types.is_floating(kind):  # Python's str() of each float, as a CSV of them reads ("12.0"), once per value
        codes, uniques = pd.factorize(np.asarray(column.to_numpy(), dtype=np.float64))
        return pa.array(np.array([*map(str, uniques.tolist()), None], dtype=object)[codes], type=pa.large_string())
    if pa.types.is_nested(kind):
        return pa.array([_json_text(v) for v in column.to_pylist()], type=pa.large_string())
    try:  # text, integers, decimals, booleans, dates and times, nulls, binary holding UTF-8
        return pc.cast(column, pa.large_string())
    except pa.ArrowInvalid:
        raise InputError(f"column holds binary data that is not UTF-8 text ({kind}).") from None


def _text_frame(table: pa.Table) -> pd.DataFrame:
    names = _unique_names([str(name) for name in table.column_names])
    columns = {}
    for name, column in zip(names, table.columns, strict=True):
        try:
            columns[name] = _column_text(column)
        except InputError as error:
            raise InputError(f"Column {name!r}: {error}") from None
    return pa.table(columns).to_pandas() if columns else pd.DataFrame(index=pd.RangeIndex(table.num_rows))


# ---- frames ------------------------------------------------------------------------------------

def _arrow_table(obj: Any) -> pa.Table | None:
    if hasattr(obj, "__arrow_c_stream__") or hasattr(obj, "__arrow_c_array__"):  # pyarrow's own tables, polars, ...
        return pa.table(obj)
    to_arrow = getattr(obj, "to_arrow", None) or getattr(obj, "to_arrow_table", None)
    if callable(to_arrow):
        return _arrow_table(to_arrow())
    return None


def as_frame(obj: object) -> pd.DataFrame:
    """A pandas frame for a table of any library: pandas as it is, anything exporting Arrow converted.

    Accepted: ``pandas.DataFrame``; ``pyarrow.Table`` / ``RecordBatch`` / ``RecordBatchReader``; polars
    frames, DuckDB relations and any object with ``__arrow_c_stream__`` or ``to_arrow()``. Text columns
    become ``str`` columns; other columns keep their types.

        >>> import pyarrow as pa
        >>> as_frame(pa.table({"phone": ["600123456"]})).dtypes.tolist()
        [<StringDtype(na_value=nan)>]
    """
    if isinstance(obj, pd.DataFrame):
        return obj
    try:
        table = _arrow_table(obj)
    except (pa.ArrowException, TypeError, ValueError) as error:
        raise InputError(f"The {type(obj).__name__} could not be converted through Arrow: {error}.") from None
    if table is None:
        kind = type(obj)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise InputError(f"Contacts must be a pandas DataFrame, a file path (CSV, Excel, ODS, Parquet, JSON lines) "
                         f"or a table that exports Arrow (polars, DuckDB, pyarrow), not {name}.")
    frame: pd.DataFrame = table.to_pandas()  # text (string, large_string, string_view) as pandas' own str columns
    return frame
