"""Tables and logs the scale tests share: repeats spread over partitions, logs of both kinds."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HEADER = ("#params\tid=%i&delivery=%d&sender=%p&recipient=%P&sent_at=%t&cost=%c&status=%s&mnc=%m&reported_at=%y"
          "&part=%n&campaign_id=%C&sending_id=%S&ref=crm\n")
URL = "https://shop.example/dlr?mid=%i&st=%s&d=%d&c=%c&m=%m&n=%n&P=%P&t=%t&y=%y&C=%C"


def contacts(n: int = 400, seed: int = 7) -> pd.DataFrame:
    """Contacts as a CSV gives them: text, some phones repeated far apart, some invalid, a missing name."""
    rng = np.random.default_rng(seed)
    phones = [f"34{600000000 + int(i):d}" for i in rng.integers(0, n // 2, size=n)]  # about half are repeats
    phones[3], phones[n - 2] = "12", "+44 7700 900123"
    names = [f"Ana{i}" if i % 37 else None for i in range(n)]
    names[5] = "Olá Ñandú"
    emails = [f"User{i % (n // 3)}@Example.com" for i in range(n)]
    return pd.DataFrame({"phone": phones, "email": emails, "name": names, "amount": [f"{i}.5" for i in range(n)]},
                        dtype="str")


def write_logs(folder: Path, messages: int = 300) -> tuple[list[Path], str]:
    """Three logs: a receiver log, the same service's access log (gzip) and a second receiver log
    repeating some of the first's notifications (a retry seen twice). Returns the paths and the URL."""
    folder.mkdir(parents=True, exist_ok=True)
    statuses = ["DELIVRD", "UNDELIV", "EXPIRED", "ACCEPTD"]
    receiver_lines, access_lines = [HEADER], []
    for i in range(messages):
        status = statuses[i % 4]
        delivery = {"DELIVRD": 1, "UNDELIV": 2, "EXPIRED": 2, "ACCEPTD": 4}[status]
        country = "447700900" if i % 3 else "34600000"
        query = (f"id=m{i:05d}&delivery={delivery}&sender=Shop&recipient={country}{i % 1000:03d}"
                 f"&sent_at=2026-11-21+09%3A{i % 50:02d}&cost=0.0450&status={status}&mnc={'01' if i % 2 else '07'}"
                 f"&reported_at=2026-11-21+10%3A{(i * 7) % 60:02d}&part=1&campaign_id={1 + i % 2}&sending_id=9&ref=crm")
        if i % 5 == 0:  # this one came in through the web server instead
            access_lines.append(
                f'10.1.2.3 - - [21/Nov/2026:10:{i % 60:02d}:00 +0000] "GET /dlr?mid=m{i:05d}&st={status}&d={delivery}'
                f'&c=0.0450&m={"01" if i % 2 else "07"}&n=1&P={country}{i % 1000:03d}&t=2026-11-21+09%3A{i % 50:02d}'
                f'&y=2026-11-21+10%3A{(i * 7) % 60:02d}&C={1 + i % 2} HTTP/1.1" 200 2 "-" "notifier"\n')
        else:
            receiver_lines.append(f"2026-11-21T10:{i % 60:02d}:{i % 59:02d}.000000+00:00\t{query}\n")
    first = folder / "receiver-a.log"
    first.write_text("".join(receiver_lines))
    second = folder / "receiver-b.log"
    second.write_text(HEADER + "".join(line.replace("T10:", "T11:") for line in receiver_lines[1:40]))
    access = folder / "access.log.gz"
    with gzip.open(access, "wt") as out:
        out.write("".join(access_lines))
    return [first, access, second], URL


def computed(lazy: Any) -> Any:
    """``lazy.compute()``, once checked against the lazy frame's ``meta``: the columns, dtypes and index
    dtype it promises are those its partitions hold (a meta saying float64 of a column computed as Int64,
    or a categorical whose categories are unknown, is a bug a later step trips over)."""
    got = lazy.compute()
    meta = lazy._meta
    assert type(got) is type(meta), f"meta is a {type(meta).__name__}, computed a {type(got).__name__}"
    if isinstance(got, pd.Series):
        assert (got.name, got.dtype) == (meta.name, meta.dtype), f"meta {meta.dtype!r}, computed {got.dtype!r}"
    else:
        assert list(got.columns) == list(meta.columns)
        wrong = {c: (meta[c].dtype, got[c].dtype) for c in got.columns if meta[c].dtype != got[c].dtype}
        assert not wrong, f"dtypes of meta and computed partitions differ: {wrong}"
    assert got.index.dtype == meta.index.dtype, f"index: meta {meta.index.dtype!r}, computed {got.index.dtype!r}"
    return got


def typed(values: dict[str, Any]) -> dict[str, Any]:
    """A dict of totals with each value's type beside it: 3 == 3.0, but a count must not come back a float."""
    return {k: (v, type(v).__name__) for k, v in values.items()}
