"""Render + cheapest encoding + SMS parts for every contact: vectorised vs a per-row loop.

Two vectorised paths are timed: ``measure_frame`` (fused: each placeholder column measured once
per distinct value) and ``render_frame`` + ``cheapest_encoding_series`` + ``sms_parts_series``.

    python benchmarks/bench_text_render_estimate.py            # 1,000,000 rows
    python benchmarks/bench_text_render_estimate.py --quick    # 20,000 rows, smoke run

The naive baseline is the straightforward loop an analyst would write: for each row,
``render`` + ``cheapest_encoding`` + ``sms_parts``. It is timed on at most 50,000 rows and
scaled linearly to the full size (the output says so). Prints rows/s for both, the ratio and the
peak resident memory of the process.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np
import pandas as pd

from sendframe.text.encodings import cheapest_encoding, cheapest_encoding_series
from sendframe.text.measure import measure_frame
from sendframe.text.parts import sms_parts, sms_parts_series
from sendframe.text.templates import render, render_frame

TEMPLATE = "Hola {name|capitalize}, your balance in {city|upper} is {amount|formatDotComma} EUR"
FIRST = ["ana", "luis", "marta", "jorge", "lucía", "joão", "zoë", "søren", "дмитрий", "李", "ayşe", "nuño"]
LAST = ["garcía", "pérez", "smith", "o'neil", "da silva", "müller", "łukasz", "núñez", "ferreira", "costa"]
CITIES = ["madrid", "lisboa", "porto", "sevilla", "málaga", "a coruña", "são paulo", "köln", "łódź", "bilbao"]
LOOP_CAP = 50_000


def make_contacts(rows: int, seed: int = 0) -> pd.DataFrame:
    """Synthetic contacts: names (some non-GSM, so utf-16 occurs), cities, amounts."""
    rng = np.random.default_rng(seed)
    names = np.array([f"{first} {last}" for first in FIRST for last in LAST], dtype=object)
    return pd.DataFrame(
        {
            "name": pd.array(names[rng.integers(0, len(names), rows)], dtype="str"),
            "city": pd.array(np.array(CITIES, dtype=object)[rng.integers(0, len(CITIES), rows)], dtype="str"),
            "amount": np.round(rng.gamma(2.0, 900.0, rows), 2),
        }
    )


def vectorised(contacts: pd.DataFrame) -> pd.DataFrame:
    """The fused path: render and measure each piece once per distinct value."""
    return measure_frame(contacts, TEMPLATE)[["text", "encoding", "parts"]]


def series_path(contacts: pd.DataFrame) -> pd.DataFrame:
    """The composable path: render_frame, then the *_series functions on the rendered texts."""
    text = render_frame(contacts, TEMPLATE)
    encoding = cheapest_encoding_series(text)
    parts = sms_parts_series(text, encoding)
    return pd.DataFrame({"text": text, "encoding": encoding, "parts": parts})


def naive(contacts: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for record in contacts.to_dict("records"):
        text = render(TEMPLATE, record)
        encoding = cheapest_encoding(text)
        rows.append((text, encoding, sms_parts(text, encoding)))
    return pd.DataFrame(rows, columns=["text", "encoding", "parts"])


def peak_memory_mb() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return kib / 1024 / (1024 if sys.platform == "darwin" else 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="contact rows (default 1,000,000)")
    parser.add_argument("--quick", action="store_true", help="small smoke run (20,000 rows)")
    args = parser.parse_args(argv)
    rows = 20_000 if args.quick else args.rows

    contacts = make_contacts(rows)
    warm = contacts.iloc[:1000]  # first calls compile regexes and import lazily: not what is measured
    vectorised(warm), series_path(warm), naive(warm)
    start = time.perf_counter()
    fast = vectorised(contacts)
    fast_seconds = time.perf_counter() - start

    start = time.perf_counter()
    composed = series_path(contacts)
    series_seconds = time.perf_counter() - start

    loop_rows = min(rows, LOOP_CAP)
    start = time.perf_counter()
    slow = naive(contacts.iloc[:loop_rows])
    loop_seconds = time.perf_counter() - start
    scaled = loop_seconds * rows / loop_rows

    same = fast.equals(composed) and (
        fast["text"].iloc[:loop_rows].tolist() == slow["text"].tolist()
        and fast["encoding"].iloc[:loop_rows].tolist() == slow["encoding"].tolist()
        and fast["parts"].iloc[:loop_rows].tolist() == slow["parts"].tolist()
    )
    print(f"rows: {rows:,}  template: {TEMPLATE!r}")
    print(f"encodings: {fast['encoding'].value_counts().to_dict()}  parts: {fast['parts'].value_counts().to_dict()}")
    print(f"vectorised: {fast_seconds:.3f} s for {rows:,} rows = {rows / fast_seconds:,.0f} rows/s")
    print(f"render_frame + *_series: {series_seconds:.3f} s = {rows / series_seconds:,.0f} rows/s")
    note = "" if loop_rows == rows else f" (timed on {loop_rows:,} rows, scaled linearly to {rows:,})"
    print(f"per-row loop: {scaled:.3f} s = {loop_rows / loop_seconds:,.0f} rows/s{note}")
    print(f"ratio: {scaled / fast_seconds:.1f}x  (target >= 10x); "
          f"render_frame + *_series: {scaled / series_seconds:.1f}x")
    print(f"answers identical on the timed rows (and both vectorised paths on all rows): {same}")
    print(f"peak memory (ru_maxrss): {peak_memory_mb():,.0f} MB  (target < 1,500 MB)")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
