"""Benchmark: sendframe.render + sendframe.estimate over 1,000,000 contacts vs a per-row Python loop.

    python benchmarks/bench_render_estimate.py            # 1,000,000 rows
    python benchmarks/bench_render_estimate.py --quick    # 20,000 rows (smoke run)

The naive way renders, picks the cheapest encoding, counts units and parts, lists lost characters
and prices each row with the scalar functions of sendframe.text and sendframe.pricing. It is timed
on a slice (``--loop-rows``) and extrapolated linearly to the full size; the output says so.
Prints rows/s for both, the ratio (target >= 10x) and the peak memory of the process.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np
import pandas as pd

import sendframe
from sendframe.api.recipients import region_of
from sendframe.pricing import load_prices
from sendframe.text import templates
from sendframe.text.encodings import cheapest_encoding, message_units, unencodable_characters
from sendframe.text.parts import sms_parts

TEMPLATE = "Hola {name|capitalize}, tu saldo en {city|upper} es {amount|formatDotComma} EUR. Baja: {UNSUB_URL}"
NAMES = ["ana garcía", "luis pérez", "joão simões", "marta lópez", "łukasz wiśniewski", "sofia müller", "iñigo ruiz",
         "carmen díaz", "đorđe petrović", "paula gil", "hugo martín", "zoë smith"]
CITIES = ["Madrid", "Sevilla", "Málaga", "A Coruña", "Lisboa", "Porto", "London", "Kraków", "Zaragoza", "Bilbao"]
PREFIXES = ["346", "347", "3519", "447"]


def contacts(rows: int, seed: int = 0) -> pd.DataFrame:
    """A synthetic contact table as a spreadsheet would hold it (numbers with + and spaces)."""
    rng = np.random.default_rng(seed)
    prefix = np.asarray(PREFIXES, dtype=object)[rng.integers(0, len(PREFIXES), rows)]
    tail_len = np.where(prefix == "3519", 8, np.where(prefix == "447", 9, 8))
    tails = rng.integers(0, 10**9, rows).astype(str)
    phone = ["+" + p + " " + t.zfill(9)[:n] for p, t, n in zip(prefix, tails, tail_len)]
    amount = np.round(rng.gamma(2.0, 800.0, rows), 2).astype(str)
    return pd.DataFrame({
        "phone": pd.array(phone, dtype="str"),
        "name": pd.array(np.asarray(NAMES, dtype=object)[rng.integers(0, len(NAMES), rows)], dtype="str"),
        "city": pd.array(np.asarray(CITIES, dtype=object)[rng.integers(0, len(CITIES), rows)], dtype="str"),
        "amount": pd.array(amount, dtype="str"),
    })


def fast(frame: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    text = sendframe.render(frame, TEMPLATE)
    est = sendframe.estimate(frame, TEMPLATE, encoding="auto")
    return text, est


def naive(frame: pd.DataFrame) -> list[tuple]:
    prices = load_prices()
    specials, shorten = templates.placeholder_links()
    out = []
    for row in frame.itertuples(index=False):
        text = templates.render(TEMPLATE, row._asdict(), specials=specials, shorten=shorten)
        encoding = cheapest_encoding(text)
        units = message_units(text, encoding)
        parts = sms_parts(text, encoding)
        forced = "".join(unencodable_characters(text, "gsm")) if encoding != "gsm" else ""
        country = region_of(row.phone)
        cost = prices.message_cost(row.phone, "sms", parts=parts)
        out.append((text, encoding, units, parts, forced, country, cost))
    return out


def peak_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--loop-rows", type=int, default=50_000, help="rows the naive loop is timed on")
    parser.add_argument("--quick", action="store_true", help="20,000 rows, loop on 5,000")
    args = parser.parse_args(argv)
    rows, loop_rows = (20_000, 5_000) if args.quick else (args.rows, args.loop_rows)
    loop_rows = min(loop_rows, rows)

    start = time.perf_counter()
    frame = sendframe.read_contacts(contacts(rows))  # setup, not timed against the loop
    print(f"read_contacts: {time.perf_counter() - start:.2f} s for {rows:,} rows (setup)")
    fast(frame.head(1000))  # warm caches (price table, parsed template)
    start = time.perf_counter()
    text, est = fast(frame)
    fast_s = time.perf_counter() - start

    start = time.perf_counter()
    loop = naive(frame.head(loop_rows))
    loop_slice_s = time.perf_counter() - start
    loop_s = loop_slice_s * rows / loop_rows

    # both ways agree on the slice
    check = est.head(loop_rows)
    assert text.head(loop_rows).tolist() == [r[0] for r in loop]
    assert check["parts"].tolist() == [r[3] for r in loop]
    assert check["encoding"].tolist() == [r[1] for r in loop]

    totals = est.attrs["totals"]
    print(f"rows: {rows:,}  template: {TEMPLATE!r}")
    print(f"encodings: {totals['encodings']}  messages: {totals['messages']:,}  cost: {totals['cost']:,.2f} {totals['currency']}")
    print(f"vectorised render + estimate: {fast_s:8.2f} s  {rows / fast_s:12,.0f} rows/s")
    scaled = "" if loop_rows == rows else f" (timed on {loop_rows:,} rows: {loop_slice_s:.2f} s, extrapolated linearly)"
    print(f"per-row Python loop:          {loop_s:8.2f} s  {rows / loop_s:12,.0f} rows/s{scaled}")
    print(f"ratio: {loop_s / fast_s:.1f}x (target >= 10x)")
    print(f"peak memory: {peak_mb():,.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
