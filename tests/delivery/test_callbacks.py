"""read_callbacks / latest_status over receiver logs and web server access logs."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

from sendframe.api.notifications import STATUSES
from sendframe.delivery.callbacks import CALLBACK_COLUMNS, latest_status, mapping_from_url, read_callbacks
from sendframe.errors import InputError

HEADER = ("#params\tid=%i&delivery=%d&sender=%p&recipient=%P&sent_at=%t&cost=%c&status=%s&mnc=%m&reported_at=%y&part=%n"
          "&campaign_id=%C&sending_id=%S&ref=crm\n")


def receiver_line(second: int, **values: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in values.items())
    return f"2026-11-21T09:30:{second:02d}.000000+00:00\t{query}\n"


def access_line(query: str, path: str = "/dlr", when: str = "21/Nov/2026:10:30:00 +0100") -> str:
    return f'10.1.2.3 - - [{when}] "GET {path}?{query} HTTP/1.1" 200 2 "-" "sendframe-notifier"\n'


def test_receiver_log_parses_every_column_with_its_type(tmp_path):
    log = tmp_path / "callbacks.log"
    log.write_text(HEADER + receiver_line(
        4, id="aa01", delivery="1", sender="Shop", recipient="447700900001", sent_at="2026-11-21+09%3A30",
        cost="0.0450", status="DELIVRD", mnc="01", reported_at="2026-11-21%2009%3A31", part="2",
        campaign_id="3", sending_id="7", ref="spring%20sale",
    ))
    frame = read_callbacks(log)
    assert list(frame.columns) == list(CALLBACK_COLUMNS) + ["ref", "received_at"]
    row = frame.iloc[0]
    assert row["id"] == "aa01" and row["delivery"] == 1 and row["delivery_meaning"] == "delivered to recipient"
    assert row["status"] == "DELIVRD" and list(frame["status"].cat.categories) == list(STATUSES)
    assert frame["status"].cat.ordered
    assert row["sent_at"] == pd.Timestamp("2026-11-21 09:30", tz="UTC")
    assert row["reported_at"] == pd.Timestamp("2026-11-21 09:31", tz="UTC")
    assert row["cost"] == pytest.approx(0.045)
    assert row["mnc"] == "01"  # leading zero kept
    assert row["part"] == 2 and row["campaign_id"] == 3 and row["sending_id"] == 7
    assert row["ref"] == "spring sale"
    assert row["received_at"] == pd.Timestamp("2026-11-21 09:30:04", tz="UTC")
    # nullable integers as narrow as the spec's range (delivery 1..16, at most 255 parts), ids 64-bit
    assert str(frame["delivery"].dtype) == "Int8" and str(frame["part"].dtype) == "Int16"
    assert str(frame["campaign_id"].dtype) == "Int64" and str(frame["sending_id"].dtype) == "Int64"
    assert str(frame["sent_at"].dtype) == "datetime64[us, UTC]"
    # a campaign's few senders and networks: categoricals, not a text per notification
    assert list(frame["sender"].cat.categories) == ["Shop"] and list(frame["mnc"].cat.categories) == ["01"]
    # the four meanings of %d as one categorical in every read: frames put end to end keep the dtype
    assert isinstance(frame["delivery_meaning"].dtype, pd.CategoricalDtype)
    assert len(frame["delivery_meaning"].cat.categories) == 4


def test_access_log_mapping_is_learnt_from_the_notification_url_with_own_parameters(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(
        access_line("mid=m1&st=DELIVRD&d=1&c=0.0400&m=07&n=1&ref=crm&batch=b%2F1")
        + access_line("mid=m2&st=UNDELIV&d=2&c=0.0400&m=&n=1&ref=crm&batch=b%2F2")
        + access_line("st=ACCEPTD&mid=m3&d=4&ref=crm&batch=x")  # another parameter order still parses
        + access_line("a=1", path="/favicon.ico")
    )
    url = "https://shop.example/dlr?mid=%i&st=%s&d=%d&c=%c&m=%m&n=%n&ref=crm&batch=b1"
    frame = read_callbacks(log, url)
    assert frame["id"].tolist() == ["m1", "m2", "m3"]
    assert frame["status"].astype(str).tolist() == ["DELIVRD", "UNDELIV", "ACCEPTD"]
    assert frame["batch"].tolist() == ["b/1", "b/2", "x"]
    assert frame["ref"].tolist() == ["crm"] * 3
    assert frame["mnc"].tolist()[:1] == ["07"]
    assert frame["received_at"].iloc[0] == pd.Timestamp("2026-11-21 09:30:00", tz="UTC")
    assert frame.attrs["other_requests"] == 1 and frame.attrs["junk_lines"] == 0


def test_mapping_from_url_names_codes_and_own_parameters():
    assert mapping_from_url("https://x/dlr?mid=%i&st=%s&ref=crm") == ({"mid": "id", "st": "status"}, ["ref"])


def test_a_notification_url_without_id_is_refused_in_plain_english():
    with pytest.raises(InputError, match="%i"):
        mapping_from_url("https://x/dlr?st=%s")


def test_junk_lines_are_counted_and_shown_never_fatal(tmp_path):
    log = tmp_path / "access.log"
    log.write_bytes(
        access_line("mid=m1&st=DELIVRD").encode()
        + b"this is not a log line\n"
        + b'10.0.0.1 - - [garbled\n'
        + access_line("st=DELIVRD").encode()  # no id
        + b"\xff\xfe broken bytes\n"
        + access_line("mid=m2&st=EXPIRED").encode()
    )
    frame = read_callbacks(log, "https://x/dlr?mid=%i&st=%s")
    assert frame["id"].tolist() == ["m1", "m2"]
    assert frame.attrs["junk_lines"] == 4
    assert frame.attrs["junk_examples"][0] == "this is not a log line"


def test_exact_duplicates_are_dropped_and_counted(tmp_path):
    log = tmp_path / "callbacks.log"
    line = dict(id="aa", status="DELIVRD", delivery="1")
    log.write_text(HEADER + receiver_line(1, **line) + receiver_line(9, **line)
                   + receiver_line(5, id="aa", status="ACCEPTD", delivery="4"))
    frame = read_callbacks(log)
    assert len(frame) == 2
    assert frame.attrs["duplicates_dropped"] == 1
    assert frame["received_at"].iloc[0].second == 1  # the first arrival is kept


def test_an_intermediate_arriving_after_the_final_never_overrides_it(tmp_path):
    log = tmp_path / "callbacks.log"
    log.write_text(
        HEADER
        + receiver_line(1, id="aa", part="1", status="DELIVRD", delivery="1", reported_at="2026-11-21+09%3A31")
        + receiver_line(2, id="aa", part="1", status="ACCEPTD", delivery="4", reported_at="2026-11-21+09%3A35")
        + receiver_line(3, id="aa", part="2", status="ACCEPTD", delivery="4", reported_at="2026-11-21+09%3A30")
        + receiver_line(4, id="bb", part="1", status="ACCEPTD", delivery="4", reported_at="2026-11-21+09%3A30")
        + receiver_line(5, id="bb", part="1", status="EXPIRED", delivery="2", reported_at="2026-11-21+09%3A29")
    )
    latest = latest_status(read_callbacks(log))
    assert [(r.id, r.part, str(r.status)) for r in latest.itertuples()] == [
        ("aa", 1, "DELIVRD"), ("aa", 2, "ACCEPTD"), ("bb", 1, "EXPIRED"),
    ]


def test_reading_does_not_change_the_callers_frame(tmp_path):
    log = tmp_path / "callbacks.log"
    log.write_text(HEADER + receiver_line(1, id="aa", status="ACCEPTD") + receiver_line(2, id="aa", status="DELIVRD"))
    frame = read_callbacks(log)
    before = frame.copy()
    latest_status(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_an_empty_log_gives_an_empty_typed_frame(tmp_path):
    log = tmp_path / "empty.log"
    log.write_text("")
    frame = read_callbacks(log)
    assert frame.empty and frame.attrs["junk_lines"] == 0
    assert "status" in frame.columns


def test_queries_in_the_url_order_and_in_any_other_order_give_the_same_values(tmp_path):
    url = "https://x/dlr?mid=%i&st=%s&n=%n&ref=crm"
    regular = ["mid=m1&st=DELIVRD&n=1&ref=a%20b", "mid=m2&st=ACCEPTD&n=2&ref=", "mid=m3&st=EXPIRED&n=&ref=c"]
    irregular = ["ref=a%20b&n=1&st=DELIVRD&mid=m1", "mid=m2&st=ACCEPTD&n=2&ref=&extra=1", "mid=m3&st=EXPIRED&ref=c&n="]
    frames = []
    for queries in (regular, irregular, [regular[0], irregular[1], regular[2]]):
        log = tmp_path / "access.log"
        log.write_text("".join(access_line(query) for query in queries))
        frames.append(read_callbacks(log, url)[["id", "status", "part", "ref"]])
    for frame in frames[1:]:
        pd.testing.assert_frame_equal(frame, frames[0])
    assert frames[0]["ref"].tolist() == ["a b", "", "c"]


def test_a_retry_is_dropped_but_another_notification_for_the_same_id_is_kept(tmp_path):
    log = tmp_path / "access.log"
    first, retry, later = "mid=m1&st=ACCEPTD&n=1", "mid=m1&st=ACCEPTD&n=1", "mid=m1&st=DELIVRD&n=1"
    log.write_text("".join(access_line(query) for query in (first, "mid=m2&st=ACCEPTD&n=1", retry, later, retry)))
    frame = read_callbacks(log, "https://x/dlr?mid=%i&st=%s&n=%n")
    assert frame["id"].tolist() == ["m1", "m2", "m1"]
    assert frame["status"].astype(str).tolist() == ["ACCEPTD", "ACCEPTD", "DELIVRD"]
    assert frame.attrs["duplicates_dropped"] == 2


def test_lines_cut_by_position_and_by_the_full_regex_give_the_same_frame(tmp_path):
    url = "https://x/dlr?mid=%i&st=%s&d=%d&t=%t&c=%c&ref=crm"
    queries = ["mid=m1&st=DELIVRD&d=1&t=2026-11-21+09%3A30&c=0.0450&ref=a%20b", "mid=m2&st=&d=&t=bad&c=&ref=",
               "mid=m%C3%A9&st=EXPIRED&d=2&t=2026-11-21+09%3A31&c=1e-3&ref=%E2%82%AC"]
    usual = "".join(access_line(query) for query in queries)
    # a "[" in the first field takes these lines off the positional fast path, through the full regex
    odd = "".join(line.replace("10.1.2.3", "a[b", 1) for line in usual.splitlines(keepends=True))
    frames = []
    for text in (usual, odd):
        log = tmp_path / "access.log"
        log.write_text(text)
        frames.append(read_callbacks(log, url))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert frames[0]["id"].tolist() == ["m1", "m2", "mé"]
    assert frames[0]["ref"].tolist() == ["a b", "", "€"]
    assert frames[0]["delivery"].isna().tolist() == [False, True, False]
    assert frames[0]["sent_at"].isna().tolist() == [False, True, False]


def test_requests_to_other_paths_are_counted_whatever_their_shape(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(access_line("mid=m1&st=DELIVRD") + access_line("mid=m2&st=DELIVRD", path="/x/dlr")
                   + access_line("mid=m3&st=DELIVRD", path="/dl") + access_line("v=3", path="/app.js"))
    frame = read_callbacks(log, "https://x/dlr?mid=%i&st=%s")
    assert frame["id"].tolist() == ["m1"]
    assert frame.attrs["other_requests"] == 3 and frame.attrs["junk_lines"] == 0


def test_an_own_parameter_named_like_a_column_stays_text(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(access_line("mid=m1&status=sale&st=DELIVRD"))
    frame = read_callbacks(log, "https://x/dlr?mid=%i&status=sale&st=%s")
    assert frame["status"].tolist() == ["sale"] and str(frame["status"].dtype) == "string"


def test_an_access_log_read_without_url_uses_the_receivers_parameter_names(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(access_line("id=a1&status=DELIVRD&part=2") + access_line("id=a2&status=ACCEPTD", path="/other"))
    frame = read_callbacks(log)
    assert frame["id"].tolist() == ["a1", "a2"] and frame["part"].tolist()[0] == 2
    assert frame["received_at"].iloc[0] == pd.Timestamp("2026-11-21 09:30:00", tz="UTC")


@pytest.mark.parametrize("path", ["/dl.r", "/h%C3%A9/dlr", "/é", "/a+b", "/"])
def test_the_wanted_path_is_matched_literally(tmp_path, path):
    log = tmp_path / "access.log"
    log.write_text(access_line("mid=m1&st=DELIVRD", path=path) + access_line("mid=m2&st=DELIVRD", path="/dlxr")
                   + access_line("mid=m3&st=DELIVRD", path=path + "x") + access_line("mid=m4&st=ACCEPTD", path=path))
    frame = read_callbacks(log, f"https://x{path}?mid=%i&st=%s")
    assert frame["id"].tolist() == ["m1", "m4"] and frame["status"].tolist() == ["DELIVRD", "ACCEPTD"]
    assert frame.attrs["other_requests"] == 2 and frame.attrs["junk_lines"] == 0


def test_a_path_with_an_ampersand_is_read_from_the_full_pattern(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(access_line("mid=m1&st=DELIVRD", path="/a&b") + access_line("mid=m2&st=DELIVRD", path="/ab"))
    frame = read_callbacks(log, "https://x/a&b?mid=%i&st=%s")
    assert frame["id"].tolist() == ["m1"] and frame.attrs["other_requests"] == 1


def test_retried_lines_keep_their_short_values_in_the_kept_rows(tmp_path):
    log = tmp_path / "access.log"
    queries = ["mid=m1&st=ACCEPTD&n=1", "mid=m1&st=ACCEPTD&n=1", "mid=m2&st=EXPIRED&n=2", "mid=m1&st=DELIVRD&n=1"]
    log.write_text("".join(access_line(query) for query in queries))
    frame = read_callbacks(log, "https://x/dlr?mid=%i&st=%s&n=%n")
    assert frame["id"].tolist() == ["m1", "m2", "m1"] and frame["status"].tolist() == ["ACCEPTD", "EXPIRED", "DELIVRD"]
    assert frame["part"].tolist() == [1, 2, 1] and frame.attrs["duplicates_dropped"] == 1


def test_a_compressed_access_log_reads_like_the_plain_one(tmp_path):
    url = "https://x/dlr?mid=%i&st=%s&ref=crm"
    text = access_line("mid=m1&st=DELIVRD&ref=a") + access_line("mid=m2&st=ACCEPTD&ref=b") + "junk\n"
    plain, packed = tmp_path / "access.log", tmp_path / "access.log.1.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    expected, frame = read_callbacks(plain, url), read_callbacks(packed, url)
    pd.testing.assert_frame_equal(frame, expected)
    assert frame["id"].tolist() == ["m1", "m2"] and frame.attrs["junk_lines"] == 1


def test_bytes_that_are_not_utf8_spoil_only_their_own_line(tmp_path):
    log = tmp_path / "access.log"
    log.write_bytes(access_line("mid=m1&st=DELIVRD&ref=caf\xe9").encode("latin-1")
                    + access_line("mid=m2&st=ACCEPTD&ref=ok").encode())
    frame = read_callbacks(log, "https://x/dlr?mid=%i&st=%s&ref=crm")
    assert frame["id"].tolist() == ["m1", "m2"]
    assert frame["ref"].tolist() == ["caf\ufffd", "ok"]


def test_empty_lines_are_not_junk_and_junk_is_shown_without_its_line_break(tmp_path):
    log = tmp_path / "access.log"
    crlf = access_line("mid=m1&st=DELIVRD").replace("\n", "\r\n").encode()
    log.write_bytes(b"\r\n" + crlf + b"\n\nnot a request\r\n")
    frame = read_callbacks(log, "https://x/dlr?mid=%i&st=%s")
    assert frame["id"].tolist() == ["m1"]
    assert frame.attrs["junk_lines"] == 1 and frame.attrs["junk_examples"] == ["not a request"]


def test_retries_of_long_queries_among_many_notifications_per_id_are_dropped_as_a_full_read_would(tmp_path):
    """Every id has several notifications; only exact repeats of a query (whatever its length) are retries."""
    log = tmp_path / "callbacks.log"
    lines, expected = [HEADER], []
    for i in range(300):
        for second, status in enumerate(("ACCEPTD", "DELIVRD")):
            values = {"id": f"m{i:04d}", "status": status, "delivery": "1", "recipient": "34600123456",
                      "ref": "x" * (i % 40)}  # lengths around and across 8-byte words
            line = receiver_line(second, **values)
            lines.append(line)
            expected.append((values["id"], status))
            if i % 3 == 0:
                lines.append(receiver_line(second + 5, **values))  # a retry: the same query, later
    log.write_text("".join(lines))
    frame = read_callbacks(log)
    assert list(zip(frame["id"], frame["status"].astype(str), strict=True)) == expected
    assert frame.attrs["duplicates_dropped"] == 200
