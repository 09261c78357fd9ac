"""Composer keystrokes on a 100,000-row contact table: live preview + counter latency.

Types a template one character at a time into the real Composer widget (no front end needed) and
reports the per-keystroke update time: median, p95 and max, for the first use of each variable
(which measures that column once) and for the steady state. The naive way, recomputing
``sendframe.estimate`` over the whole table at every keystroke, is measured in the same run on a
few keystrokes.

    python benchmarks/bench_composer.py            # 100,000 rows
    python benchmarks/bench_composer.py --quick    # 5,000 rows
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from sendframe.campaign.message import sms
from sendframe.campaign.prepared import estimate
from sendframe.notebook.composer import Composer

TEMPLATE = "Hola {name|capitalize}, tu saldo en {city|upper} es {amount|formatDotComma} EUR. Gracias!"


def contacts(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    first = np.array(["ana", "joão", "maría", "zoë", "iñigo", "luís", "sara", "pedro"])
    cities = np.array(["lugo", "évora", "são paulo", "madrid", "porto", "vigo"])
    return pd.DataFrame({
        "phone": (34600000000 + rng.integers(0, 9_999_999, rows)).astype(str),
        "name": [f"{first[i % 8]} {i}" for i in range(rows)],
        "city": cities[rng.integers(0, len(cities), rows)],
        "amount": (rng.integers(0, 10_000_000, rows) / 100).astype(str),
    })


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = 5_000 if args.quick else args.rows
    table = contacts(rows)
    composer = Composer(table, sender="Shop", campaign_name="bench")  # a complete message: the path a send takes
    first_use, steady = [], []
    seen_pieces: set[str] = set()
    for end in range(1, len(TEMPLATE) + 1):
        text = TEMPLATE[:end]
        started = time.perf_counter()
        composer.inputs["message"].value = text
        elapsed = time.perf_counter() - started
        closed = text.endswith("}")
        (first_use if closed and text not in seen_pieces else steady).append(elapsed)
        seen_pieces.add(text)
    naive = []
    for end in (20, 45, 70, len(TEMPLATE)):
        started = time.perf_counter()
        estimate(sms(TEMPLATE[:end], sender="Shop", encoding="auto"), table)
        naive.append(time.perf_counter() - started)

    def ms(values: list[float]) -> str:
        values = sorted(values)
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        median = statistics.median(values) * 1000
        return f"median {median:7.1f} ms  p95 {p95 * 1000:7.1f} ms  max {values[-1] * 1000:7.1f} ms  (n={len(values)})"

    print(f"rows: {rows:,}")
    print(f"composer, steady keystrokes      : {ms(steady)}")
    print(f"composer, first use of a variable: {ms(first_use)}")
    print(f"naive estimate per keystroke     : {ms(naive)}")
    ratio = statistics.median(naive) / statistics.median(steady)
    print(f"ratio (naive / composer, median) : {ratio:.1f}x   target: composer under 100 ms per keystroke")


if __name__ == "__main__":
    main()
