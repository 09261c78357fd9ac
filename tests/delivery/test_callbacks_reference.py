"""read_callbacks agrees with a plain per-line reference parser on generated access logs.

The fast path reads the usual line shape, times and notification dates by position and arithmetic;
lines, times and dates of any other shape go the slow way. Both must give what urllib and pyarrow's strptime give one
line at a time.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sendframe.delivery.callbacks import read_callbacks

URL = "https://shop.example/dlr?mid=%i&st=%s&d=%d&t=%t&y=%y&c=%c&ref=crm"
ORDER = ["mid", "st", "d", "t", "y", "c", "ref"]
LINE = re.compile(r'^\S+ \S+ \S+ \[([^\]]+)\] "(?:GET|HEAD|POST) ([^?" ]*)\?([^" ]*) HTTP/[0-9.]+"')

digits = st.integers(0, 99).map(lambda v: f"{v:02d}")
clf_time = st.one_of(
    st.builds(lambda d, mon, y, h, m, s, sign, oh, om: f"{d}/{mon}/{y}:{h}:{m}:{s} {sign}{oh}{om}",
              st.integers(0, 32).map(lambda v: f"{v:02d}"), st.sampled_from(["Jan", "Feb", "Nov", "Dec", "nov", "Xyz"]),
              st.sampled_from(["2024", "2026", "1000", "0999", "9999"]), st.integers(0, 25).map(lambda v: f"{v:02d}"),
              digits, st.integers(0, 61).map(lambda v: f"{v:02d}"), st.sampled_from("+-"),
              st.integers(0, 25).map(lambda v: f"{v:02d}"), st.integers(0, 61).map(lambda v: f"{v:02d}")),
    st.sampled_from(["21/Nov/2026:10:30:00 +0100", "1/Nov/2026:10:30:00 +0100", "21/Nov/2026:10:30:00"]),
)
notification_date = st.one_of(
    st.builds(lambda y, mo, d, space, h, colon, m: f"{y}-{mo}-{d}{space}{h}{colon}{m}",
              st.sampled_from(["2026", "2024", "1000", "0999"]), st.integers(0, 13).map(lambda v: f"{v:02d}"),
              st.integers(0, 32).map(lambda v: f"{v:02d}"), st.sampled_from(["+", "%20", "%2", "x"]),
              st.integers(0, 25).map(lambda v: f"{v:02d}"), st.sampled_from([":", "%3A", "%3a", "%3"]), digits),
    st.sampled_from(["", "bad", "2026-11-21+09%3A3", "2026-11-21+09%3A300"]),
)
line_spec = st.fixed_dictionaries({
    "host": st.sampled_from(["10.0.0.1", "a[b", "h", "10.0.0.250"]),
    "when": clf_time,
    "method": st.sampled_from(["GET", "HEAD", "POST"]),
    "path": st.sampled_from(["/dlr", "/dlr", "/dlr", "/other"]),
    "mid": st.text("abc0123456789", min_size=0, max_size=20),
    "st": st.sampled_from(["DELIVRD", "ACCEPTD", "UNDELIV", "EXPIRED", "bogus", ""]),
    "d": st.sampled_from(["1", "2", "4", "16", ""]),
    "t": notification_date,
    "y": notification_date,
    "c": st.sampled_from(["0.0450", "1", "", "1e-3"]),
    "ref": st.sampled_from(["crm", "crm%200", "a+b", "%E2%82%AC", ""]),
    "shuffle": st.booleans(),
    "drop": st.sampled_from([None, None, None, "c", "t"]),
})


def render(spec: dict) -> str:
    names = [name for name in ORDER if name != spec["drop"]]
    if spec["shuffle"]:
        names = names[::-1]
    query = "&".join(f"{name}={spec[name]}" for name in names)
    return f'{spec["host"]} - - [{spec["when"]}] "{spec["method"]} {spec["path"]}?{query} HTTP/1.1" 200 2 "-" "ua x"'


def reference(lines: list[str]) -> tuple[pd.DataFrame, int]:
    """One line at a time: the regex, parse_qsl, pyarrow's strptime; retries (equal queries) dropped."""
    rows, junk, seen = [], 0, set()
    for line in lines:
        match = LINE.match(line)
        if not match:
            junk += 1
            continue
        when, path, query = match.groups()
        if path != "/dlr":
            continue
        params = dict(parse_qsl(query, keep_blank_values=True))
        if not params.get("mid"):
            junk += 1
            continue
        if query in seen:
            continue
        seen.add(query)

        def date(text, form):  # pyarrow's strptime, one value at a time, as the slow path uses it (microseconds)
            if text is None:
                return None
            return pc.strptime(pa.array([text]), format=form, unit="us", error_is_null=True).cast(pa.int64())[0].as_py()

        rows.append({
            "id": params["mid"], "status": params.get("st"), "delivery": params.get("d"),
            "sent_at": date(params.get("t"), "%Y-%m-%d %H:%M"), "reported_at": date(params.get("y"), "%Y-%m-%d %H:%M"),
            "cost": params.get("c"), "ref": params.get("ref"), "received_at": date(when, "%d/%b/%Y:%H:%M:%S %z"),
        })
    return pd.DataFrame(rows, dtype=object), junk


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(line_spec, min_size=1, max_size=30), repeat=st.integers(0, 3), junk=st.booleans())
def test_generated_access_logs_parse_as_the_per_line_reference(tmp_path, specs, repeat, junk):
    lines = [render(spec) for spec in specs]
    lines += lines[:repeat]  # retries
    if junk:
        lines.insert(len(lines) // 2, "not a log line")
    log = tmp_path / "access.log"
    log.write_text("".join(line + "\n" for line in lines))
    frame = read_callbacks(log, URL)
    expected, junk_count = reference(lines)
    assert frame.attrs["junk_lines"] == junk_count
    assert frame["id"].tolist() == expected.get("id", pd.Series(dtype=object)).tolist()
    if expected.empty:
        return
    assert frame["status"].astype("string").fillna("").tolist() == [
        s if s in {"DELIVRD", "ACCEPTD", "UNDELIV", "EXPIRED"} else "" for s in expected["status"].fillna("")]
    delivery = pd.to_numeric(expected["delivery"].replace("", None)).astype("Float64")
    assert frame["delivery"].astype("Float64").tolist() == delivery.tolist()
    assert frame["cost"].fillna(-1).tolist() == pd.to_numeric(expected["cost"].replace("", None)).fillna(-1).tolist()
    assert frame["ref"].tolist() == expected["ref"].tolist()
    for column in ("sent_at", "reported_at", "received_at"):
        got = [None if missing else micros for micros, missing in zip(frame[column].array.asi8, frame[column].isna(),
                                                                          strict=True)]
        assert got == [None if pd.isna(v) else int(v) for v in expected[column]], column


@given(specs=st.lists(line_spec, min_size=1, max_size=20), ending=st.sampled_from(["\n", "\r\n", "\n\n"]),
       last=st.booleans())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_line_endings_and_a_missing_last_newline_read_as_the_reference(tmp_path, specs, ending, last):
    lines = [render(spec) for spec in specs]
    text = ending.join(lines) + (ending if last else "")
    log = tmp_path / "access.log"
    log.write_bytes(text.encode())
    frame = read_callbacks(log, URL)
    expected, junk_count = reference(lines)
    assert frame.attrs["junk_lines"] == junk_count
    assert frame["id"].tolist() == expected.get("id", pd.Series(dtype=object)).tolist()
    assert frame["ref"].tolist() == expected.get("ref", pd.Series(dtype=object)).tolist()


def test_an_unterminated_last_line_that_repeats_a_shorter_row_is_a_retry(tmp_path):
    # the retry's query digest must not depend on the other rows' lengths (found by the test above)
    short = 'h - - [1/Nov/2026:10:30:00 +0100] "GET /dlr?mid=7&st=DELIVRD&ref=crm HTTP/1.1" 200 2 "-" "ua x"'
    long_ = ('h - - [1/Nov/2026:10:30:00 +0100] "GET /dlr?mid=8&st=DELIVRD&d=1&c=0.0450&y=2026-11-01+10:30:00'
             '&t=2026-11-01+10:30:05&ref=crm HTTP/1.1" 200 2 "-" "ua x"')
    log = tmp_path / "access.log"
    log.write_text(f"{long_}\n{short}\n{short}")
    frame = read_callbacks(log, URL)
    assert frame["id"].tolist() == ["8", "7"]
    assert frame.attrs["duplicates_dropped"] == 1
