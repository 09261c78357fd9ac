"""The text engine alone: render + cheapest encoding + SMS parts of every contact, vectorised vs str methods.

    python benchmarks/bench_text_render_estimate.py            # 1,000,000 rows
    python benchmarks/bench_text_render_estimate.py --quick    # 20,000 rows, smoke run

The contacts are ``messy_data.py``'s (names cased as people type them, some with characters GSM lacks, so
gsm, gsm-pt and utf-16 all occur; amounts unique per row, so no value repeats to save work), the template
``messy_data.TEMPLATE`` with ``{name|capitalize}``, ``{amount|formatDotComma}`` and ``{UNSUB_URL}``. No
phones here: this measures the text engine, ``bench_render_estimate.py`` the whole preview.

Timed in the same run:

- ``measure_frame`` (fused: each placeholder column measured once per distinct value);
- ``render_frame`` + ``cheapest_encoding_series`` + ``sms_parts_series`` (the composable path);
- the analyst's loop (``analyst.py``): per row the text by str methods, the cheapest encoding by set tests
  of the GSM and Portuguese character tables, parts by arithmetic. Timed on at most 100,000 rows and
  extrapolated linearly (the output says so).

Prints rows/s for each, the ratio, whether the three give the same text, encoding and parts, and the
process's peak memory.
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd

import analyst
from messy_data import TEMPLATE, messy_contacts
from sandbox_process import peak_memory_mib
from sendframe.text.encodings import cheapest_encoding_series
from sendframe.text.measure import measure_frame
from sendframe.text.parts import sms_parts_series
from sendframe.text.templates import placeholder_links, render_frame

LOOP_CAP = 100_000
LINK_BASE = "https://sndf.io"
SPECIALS = placeholder_links(LINK_BASE)[0]


def vectorised(contacts: pd.DataFrame) -> pd.DataFrame:
    """The fused path: render and measure each piece once per distinct value."""
    return measure_frame(contacts, TEMPLATE, specials=SPECIALS)[["text", "encoding", "parts"]]


def series_path(contacts: pd.DataFrame) -> pd.DataFrame:
    """The composable path: render_frame, then the *_series functions on the rendered texts."""
    text = render_frame(contacts, TEMPLATE, specials=SPECIALS)
    encoding = cheapest_encoding_series(text)
    parts = sms_parts_series(text, encoding)
    return pd.DataFrame({"text": text, "encoding": encoding, "parts": parts})


def analysts_loop(contacts: pd.DataFrame) -> pd.DataFrame:
    """What one writes without sendframe: str methods and set tests, row by row."""
    unsub = SPECIALS["UNSUB_URL"]
    rows = []
    for name, amount in zip(contacts["name"].tolist(), contacts["amount"].tolist(), strict=True):
        text = analyst.render(name, amount, unsub)
        encoding = analyst.cheapest(text)
        rows.append((text, encoding, analyst.parts(text, encoding)))
    return pd.DataFrame(rows, columns=["text", "encoding", "parts"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="contact rows (default 1,000,000)")
    parser.add_argument("--quick", action="store_true", help="small smoke run (20,000 rows)")
    args = parser.parse_args(argv)
    rows = 20_000 if args.quick else args.rows

    contacts = messy_contacts(rows)[["name", "amount", "city"]]
    warm = contacts.iloc[:1000]  # first calls compile regexes and import lazily: not what is measured
    vectorised(warm), series_path(warm), analysts_loop(warm)
    start, cpu = time.perf_counter(), time.process_time()
    fast = vectorised(contacts)
    fast_seconds, fast_cpu = time.perf_counter() - start, time.process_time() - cpu

    start = time.perf_counter()
    composed = series_path(contacts)
    series_seconds = time.perf_counter() - start

    loop_rows = min(rows, LOOP_CAP)
    start, cpu = time.perf_counter(), time.process_time()
    slow = analysts_loop(contacts.iloc[:loop_rows])
    loop_seconds, loop_cpu = time.perf_counter() - start, time.process_time() - cpu
    scaled = loop_seconds * rows / loop_rows

    head = fast.iloc[:loop_rows].reset_index(drop=True)
    same = fast.equals(composed) and all(
        head[c].astype(object).tolist() == slow[c].tolist() for c in ("text", "encoding", "parts"))
    print(f"rows: {rows:,} ({contacts['name'].nunique():,} distinct names, {contacts['amount'].nunique():,} distinct "
          f"amounts)  template: {TEMPLATE!r}")
    print(f"encodings: {fast['encoding'].value_counts().to_dict()}  parts: {fast['parts'].value_counts().to_dict()}")
    print(f"measure_frame (vectorised): {fast_seconds:.3f} s = {rows / fast_seconds:,.0f} rows/s "
          f"({fast_cpu:.2f} s CPU)")
    print(f"render_frame + *_series: {series_seconds:.3f} s = {rows / series_seconds:,.0f} rows/s")
    note = "" if loop_rows == rows else f" (timed on {loop_rows:,} rows, scaled linearly to {rows:,})"
    print(f"analyst's loop (str methods, set tests): {scaled:.3f} s = {loop_rows / loop_seconds:,.0f} rows/s "
          f"({loop_cpu * rows / loop_rows:.2f} s CPU){note}")
    print(f"ratio: {scaled / fast_seconds:.1f}x  (target >= 10x); "
          f"render_frame + *_series: {scaled / series_seconds:.1f}x; load average {os.getloadavg()[0]:.1f}")
    print(f"answers identical on the timed rows (and both vectorised paths on all rows): {same}")
    print(f"peak memory (VmHWM): {peak_memory_mib():,.0f} MB  (target < 1,500 MB)")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
