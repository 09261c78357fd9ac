"""Parse an nginx access log of delivery notifications: read_callbacks vs a per-line urllib loop.

The log is shaped like a campaign's: each message's ACCEPTD and final report, and some retries.

    python benchmarks/bench_callbacks.py            # 1,000,000 lines
    python benchmarks/bench_callbacks.py --quick    # 20,000 lines, smoke run

Both produce the same typed frame (id, status, delivery, sent_at, reported_at, cost, mnc, part,
campaign_id, own parameter). Both are warmed up first on a small log (imports, regex and thread
start-up), then each is timed three times and its median kept. The naive loop is timed on at most
100,000 lines and scaled linearly to the full size (the output says so). Prints lines/s for both
and the ratio; then what a later read costs once lines were appended (``read_callbacks`` parses
only what was appended since its last read of the log).
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pandas as pd

from sendframe.delivery.callbacks import LOG_READS, read_callbacks

URL = "https://shop.example/dlr?mid=%i&st=%s&d=%d&t=%t&y=%y&c=%c&m=%m&n=%n&cid=%C&ref=crm"
STATUSES = [("ACCEPTD", 4), ("DELIVRD", 1), ("UNDELIV", 2), ("EXPIRED", 2)]
LOOP_CAP = 100_000
REPEATS = 3
LINE = re.compile(r'^\S+ \S+ \S+ \[([^\]]+)\] "(?:GET|HEAD|POST) ([^" ]*) HTTP/[0-9.]+"')


def write_log(path: Path, lines: int, seed: int = 0) -> None:
    """As a campaign's log looks: each message's ACCEPTD then its final report (two lines per id, not next to
    each other), and about one line in 200 a retry of an earlier one (the same query again, later)."""
    rng = np.random.default_rng(seed)
    final = rng.integers(1, len(STATUSES), lines)
    minute = rng.integers(0, 600, lines)
    retried = rng.random(lines) < 0.005
    with path.open("w") as handle:
        for i in range(lines):
            message = (i // 1000) * 500 + i % 500  # ACCEPTD in the first half of each block of 1,000, final after
            name, value = STATUSES[0] if i % 1000 < 500 else STATUSES[final[i]]
            hh, mm = divmod(int(minute[i]), 60)
            when = f"2026-11-21+{hh:02d}%3A{mm:02d}"
            query = (f"mid={message:020x}&st={name}&d={value}&t={when}&y={when}"
                     f"&c=0.0450&m=0{message % 4}&n=1&cid={message % 7 + 1}&ref=crm%20{message % 3}")
            line = (f'10.0.0.{i % 250} - - [21/Nov/2026:{hh:02d}:{mm:02d}:{i % 60:02d} +0000] '
                    f'"GET /dlr?{query} HTTP/1.1" 200 2 "-" "sendframe-notifier"\n')
            handle.write(line)
            if retried[i]:
                handle.write(line.replace(f":{i % 60:02d} +0000]", f":{(i + 7) % 60:02d} +0000]"))
        handle.write("a junk line\n")


def naive(path: Path, limit: int) -> pd.DataFrame:
    """What one would write by hand: per line, regex + urlsplit + parse_qsl, then a frame."""
    rows = []
    with path.open() as handle:
        for count, line in enumerate(handle):
            if count >= limit:
                break
            match = LINE.match(line)
            if not match:
                continue
            params = dict(parse_qsl(urlsplit(match.group(2)).query, keep_blank_values=True))
            if not params.get("mid"):
                continue
            rows.append({
                "id": params["mid"], "status": params.get("st"),
                "delivery": int(params["d"]) if params.get("d") else None,
                "sent_at": params.get("t"), "reported_at": params.get("y"),
                "cost": float(params["c"]) if params.get("c") else None,
                "mnc": params.get("m"), "part": int(params["n"]) if params.get("n") else None,
                "campaign_id": int(params["cid"]) if params.get("cid") else None, "ref": params.get("ref"),
            })
    frame = pd.DataFrame(rows)
    for column in ("sent_at", "reported_at"):
        frame[column] = pd.to_datetime(frame[column], format="%Y-%m-%d %H:%M", utc=True)
    return frame.drop_duplicates()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 lines (smoke run)")
    parser.add_argument("--lines", type=int, default=None)
    args = parser.parse_args(argv)
    lines = args.lines or (20_000 if args.quick else 1_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        path, small = Path(tmp) / "access.log", Path(tmp) / "warm-up.log"
        write_log(path, lines)
        write_log(small, 2_000, seed=1)
        read_callbacks(small, URL), naive(small, 2_000)  # warm-up: imports, regex compilation, thread pools
        looped = min(lines, LOOP_CAP)
        fast_times, slow_times = [], []
        for _ in range(REPEATS):
            LOG_READS.clear()  # a first read: the whole log is parsed
            start = time.perf_counter()
            frame = read_callbacks(path, URL)
            fast_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            baseline = naive(path, looped)
            slow_times.append((time.perf_counter() - start) * lines / looped)
        fast, slow = statistics.median(fast_times), statistics.median(slow_times)
        poll_times = []
        for round_ in range(REPEATS):  # polling the growing log: 10 lines appended since the last read
            write_log(small, 10, seed=round_ + 2)
            with path.open("a") as handle:
                handle.write(small.read_text())
            start = time.perf_counter()
            polled = read_callbacks(path, URL)
            poll_times.append(time.perf_counter() - start)
        poll = statistics.median(poll_times)
    # every notification once (the retries dropped); the loop read the log's first `looped` lines the same way
    assert len(frame) == lines, (len(frame), lines)
    assert baseline["id"].isin(frame["id"]).all() and len(baseline) <= looped, len(baseline)
    scaled = f" (timed on {looped:,} lines, scaled linearly)" if looped < lines else ""
    print(f"lines: {lines:,} notifications, two per message, with about 0.5% retries of earlier lines; "
          f"junk reported: {frame.attrs['junk_lines']}")
    runs = f" (median of {REPEATS} runs)"
    print(f"read_callbacks (pyarrow): {fast:8.2f} s  {lines / fast:12,.0f} lines/s{runs}")
    print(f"per-line urllib loop:     {slow:8.2f} s  {lines / slow:12,.0f} lines/s{runs}{scaled}")
    print(f"ratio: {slow / fast:.1f}x")
    print(f"a later read after 11 lines were appended (the log is polled): {poll * 1000:.1f} ms, parsed "
          f"{polled.attrs['bytes_read']:,} bytes; {fast / poll:.0f}x less than reading it whole{runs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
