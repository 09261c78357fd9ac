"""read_table / as_frame: contact tables in the formats analysts have, every column as text, plain errors."""

from __future__ import annotations

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sendframe.campaign.contacts import read_contacts
from sendframe.campaign.tables import as_frame, read_table
from sendframe.errors import InputError, UnknownOptionError


def _text_columns(frame: pd.DataFrame) -> bool:
    return all(str(dtype) == "str" for dtype in frame.dtypes)


def test_a_comma_csv_keeps_leading_zeros_and_words_and_reads_empty_cells_as_missing(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text('phone,zip,note\n600123456,08001,n/a\n"600 123 457",00100,\n', encoding="utf-8")
    frame = read_table(path)
    assert frame.to_dict("list") == {"phone": ["600123456", "600 123 457"], "zip": ["08001", "00100"],
                                     "note": ["n/a", frame.loc[1, "note"]]}
    assert pd.isna(frame.loc[1, "note"]) and _text_columns(frame)


def test_a_semicolon_cp1252_csv_from_excel_is_detected_with_its_decimal_commas(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("Teléfono;Nombre;Importe\n600123456;Begoña Núñez;12,50\n611222333;José Ruiz;1.234,00\n"
                     .encode("cp1252"))
    frame = read_table(path)
    assert list(frame.columns) == ["Teléfono", "Nombre", "Importe"]
    assert frame["Nombre"].tolist() == ["Begoña Núñez", "José Ruiz"]
    assert frame["Importe"].tolist() == ["12,50", "1.234,00"]


def test_a_utf16_tab_separated_file_as_excel_saves_unicode_text_is_read(tmp_path):
    path = tmp_path / "unicode.txt"
    path.write_bytes("phone\tname\n+34 600 123 456\tŁukasz\n".encode("utf-16"))
    frame = read_table(path)
    assert frame.to_dict("list") == {"phone": ["+34 600 123 456"], "name": ["Łukasz"]}


def test_utf16_without_a_byte_order_mark_and_utf8_with_one_are_read(tmp_path):
    plain = tmp_path / "le.csv"
    plain.write_bytes("phone,name\n600123456,Zoë\n".encode("utf-16-le"))
    assert read_table(plain)["name"].tolist() == ["Zoë"]
    bom = tmp_path / "bom.csv"
    bom.write_bytes("phone|name\n600123456|Zoë\n".encode("utf-8-sig"))
    assert list(read_table(bom).columns) == ["phone", "name"]


def test_bytes_cp1252_leaves_undefined_are_read_as_latin1(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"phone,name\n600123456,caf\xe9\x81\n")
    assert read_table(path)["name"].tolist() == ["café\x81"]


def test_a_file_valid_utf8_at_the_start_but_cp1252_further_on_is_read_as_cp1252(tmp_path):
    path = tmp_path / "late.csv"
    body = "".join(f"6001{i:05d},Ana\n" for i in range(90_000))  # more than the 1 MB sample
    path.write_bytes(("phone,name\n" + body).encode() + "611222333,Begoña\n".encode("cp1252"))
    frame = read_table(path)
    assert frame["name"].iloc[-1] == "Begoña" and len(frame) == 90_001


def test_rows_shorter_than_the_header_get_missing_cells(tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("phone,name,city\n600123456,Ana\n611222333,Bo,Vigo\n", encoding="utf-8")
    frame = read_table(path)
    assert pd.isna(frame.loc[0, "city"]) and frame.loc[1, "city"] == "Vigo"


def test_a_row_longer_than_the_header_is_a_plain_error_naming_the_line(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("phone,name\n600123456,Ana\n611222333,Bo,Vigo,extra\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"long\.csv: line 3 has 4 fields where the header has 2"):
        read_table(path)


def test_a_wrong_explicit_encoding_is_a_plain_error_not_a_decoder_traceback(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes("phone,name\n600123456,Begoña\n".encode("cp1252"))
    with pytest.raises(InputError, match="cannot be read as utf-8") as caught:
        read_table(path, encoding="utf-8")
    assert not isinstance(caught.value, UnicodeDecodeError) and caught.value.__cause__ is None
    assert read_table(path, encoding="cp1252")["name"].tolist() == ["Begoña"]
    with pytest.raises(InputError, match="not an encoding"):
        read_table(path, encoding="klingon")


def test_a_binary_file_is_a_plain_error(tmp_path):
    path = tmp_path / "photo.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    with pytest.raises(InputError, match=r"photo\.csv is not a text table"):
        read_table(path)
    archive = tmp_path / "contacts.csv.gz"
    archive.write_bytes(b"\x1f\x8b\x08\x00" + bytes(100))
    with pytest.raises(InputError, match="compressed"):
        read_table(archive)


def test_an_xlsx_sheet_is_read_as_text(tmp_path):
    path = tmp_path / "contacts.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        sheet = pd.DataFrame({"Mobile": [34600123456, 447700900123], "zip": ["08001", "00100"], "amount": [12.5, 3.0]})
        sheet.to_excel(writer, sheet_name="Clientes", index=False)
        pd.DataFrame({"other": ["x"]}).to_excel(writer, sheet_name="Notas", index=False)
    frame = read_table(path)
    assert frame.to_dict("list") == {"Mobile": ["34600123456", "447700900123"], "zip": ["08001", "00100"],
                                     "amount": ["12.5", "3"]}
    assert _text_columns(frame)
    assert read_table(path, sheet_name="Notas").columns.tolist() == ["other"]
    with pytest.raises(InputError, match="cannot be read as a spreadsheet.*'Missing'"):
        read_table(path, sheet_name="Missing")


def test_an_ods_sheet_is_read_as_text(tmp_path):
    path = tmp_path / "contacts.ods"
    pd.DataFrame({"Teléfono": ["600 123 456"], "Nombre": ["Begoña"]}).to_excel(path, engine="odf", index=False)
    assert read_table(path).to_dict("list") == {"Teléfono": ["600 123 456"], "Nombre": ["Begoña"]}


def test_a_damaged_spreadsheet_is_a_plain_error(tmp_path):
    path = tmp_path / "broken.xlsx"
    path.write_bytes(b"PK\x03\x04" + b"not really a zip" * 10)
    with pytest.raises(InputError, match=r"broken\.xlsx cannot be read as a spreadsheet"):
        read_table(path)


def test_parquet_columns_of_any_type_are_read_as_text_even_under_a_csv_name(tmp_path):
    table = pa.table({"phone": [34600123456.0, None], "id": pa.array([7, 8], pa.int64()), "amount": [12.5, 3.0],
                      "name": ["Ana", "Bo"], "active": [True, False]})
    path = tmp_path / "export.csv"  # what the issue saw fail with a raw UnicodeDecodeError
    pq.write_table(table, path)
    frame = read_table(path)
    assert frame.to_dict("list") == {"phone": ["34600123456.0", frame.loc[1, "phone"]], "id": ["7", "8"],
                                     "amount": ["12.5", "3.0"], "name": ["Ana", "Bo"], "active": ["true", "false"]}
    assert pd.isna(frame.loc[1, "phone"]) and _text_columns(frame)
    assert read_contacts(path)["phone"].tolist()[0] == "34600123456"


def test_json_lines_are_read_with_numbers_as_written_and_missing_fields_missing(tmp_path):
    path = tmp_path / "contacts.jsonl"
    lines = ['{"phone": 34600123456, "name": "Ana", "tags": ["vip"]}', "",
             '{"phone": "+34 611 222 333", "email": null}']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    frame = read_table(path)
    assert frame["phone"].tolist() == ["34600123456", "+34 611 222 333"]
    assert frame.loc[0, "tags"] == '["vip"]' and pd.isna(frame.loc[1, "name"]) and pd.isna(frame.loc[0, "email"])
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"phone": "1"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.ndjson: line 2 is not valid JSON"):
        read_table(bad)


def test_unknown_options_are_refused_with_the_closest_one():
    with pytest.raises(UnknownOptionError, match="unknown option 'delimter'. Did you mean 'delimiter'"):
        read_table("data/contacts.csv", delimter=";")


def test_a_missing_file_or_a_folder_is_a_plain_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="is a folder"):
        read_table(tmp_path)


def test_pandas_frames_are_taken_as_they_are():
    frame = pd.DataFrame({"phone": [34600123456.0]})
    assert as_frame(frame) is frame


def test_polars_duckdb_and_pyarrow_tables_become_pandas_frames_with_str_columns():
    expected = {"Mobile": ["600123456", "611222333"], "n": [1, 2]}
    polars_frame = pl.DataFrame(expected)
    relation = duckdb.sql("select * from (values ('600123456', 1), ('611222333', 2)) t(\"Mobile\", n)")
    arrow_table = pa.table(expected)
    for table in (polars_frame, relation, arrow_table, arrow_table.to_batches()[0]):
        frame = as_frame(table)
        assert frame.to_dict("list") == expected, type(table)
        assert str(frame["Mobile"].dtype) == "str"


def test_an_object_with_to_arrow_is_converted():
    class Warehouse:
        def to_arrow(self) -> pa.Table:
            return pa.table({"phone": ["600123456"]})

    assert as_frame(Warehouse())["phone"].tolist() == ["600123456"]


def test_anything_else_is_refused_naming_what_is_accepted():
    with pytest.raises(InputError, match=r"pandas DataFrame, a file path .*\(polars, DuckDB, pyarrow\), not list\."):
        as_frame([{"phone": "600123456"}])


def test_read_contacts_takes_a_polars_frame_with_a_mobile_column():
    contacts = read_contacts(pl.DataFrame({"Mobile": ["+34 600 123 456", "600123456"], "Name": ["Ana", "Ana"]}))
    assert contacts["phone"].tolist() == ["34600123456", "34600123456"]
    assert contacts["duplicate"].tolist() == [False, True]
    assert contacts.attrs["recipient_columns"] == {"phone": "Mobile"}


@pytest.mark.parametrize("quoted_header", [True, False])
def test_a_large_csv_reads_values_holding_newlines_and_unquoted_files_alike(tmp_path, quoted_header):
    # Arrow splits a large file into blocks: a newline inside a quoted value must not end its row
    rows = [f"6001{i:05d},name {i},Madrid" for i in range(120_000)]
    header = '"phone","name","note"' if quoted_header else "phone,name,note"
    plain = tmp_path / "plain.csv"
    plain.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    expected = pd.read_csv(plain, dtype=str)
    assert read_table(plain).equals(expected.astype("str"))
    multiline = tmp_path / "multiline.csv"
    for i in range(0, len(rows), 7):  # some straddle the blocks Arrow reads in parallel
        rows[i] = f'6001{i:05d},"Ana\nPérez {i}","line one\nline two"'
    multiline.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    frame = read_table(multiline)
    assert len(frame) == 120_000 and frame.loc[90_006, "name"] == "Ana\nPérez 90006"
    assert frame.loc[90_006, "note"] == "line one\nline two" and frame.loc[90_007, "phone"] == "600190007"
