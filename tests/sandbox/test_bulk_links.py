"""The links of a send request are made in bulk and stored with its messages, in one transaction."""

from __future__ import annotations

import collections
import re
import sqlite3

import httpx
import pytest

from sendframe.sandbox import Sandbox, links, store

TOKEN = re.compile(r"/u/([A-Za-z0-9]+)")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    path = tmp_path_factory.mktemp("bulk") / "sandbox.sqlite"
    with Sandbox(db=str(path), clock="manual") as sb:
        yield sb, path


def _send(sb, body: dict, channel: str = "sms") -> httpx.Response:
    return httpx.post(f"{sb.base_url}/api/rest/{channel}", json=body, auth=(sb.username, sb.api_password))


def _on_disk(path, sql: str, args: tuple = ()) -> list[tuple]:
    """Rows as another process sees them: only what was committed to the file."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def _texts(sb, ids: list[str]) -> dict[str, str]:
    answer = httpx.get(f"{sb.base_url}/api/rest/sms/{','.join(ids)}", auth=(sb.username, sb.api_password))
    assert answer.status_code == 200, answer.text
    return {record["id"]: record["message"] for record in answer.json()["data"]}


def test_each_message_gets_its_own_unsubscribe_link_stored_for_its_recipient(sandbox):
    sb, path = sandbox
    to = [f"3460090{i:04d}" for i in range(300)]
    answer = _send(sb, {"from": "Shop", "to": to, "message": "Hola {name}. Baja: {UNSUB_URL}",
                        "sub": [{"name": f"n{i}"} for i in range(300)]})
    assert answer.status_code == 202, answer.text
    ids = [item["id"] for item in answer.json()["result"]]
    texts = {}
    for start in range(0, len(ids), 100):
        texts.update(_texts(sb, ids[start:start + 100]))
    tokens = {message_id: TOKEN.findall(text) for message_id, text in texts.items()}
    assert all(len(found) == 1 for found in tokens.values())
    tokens = {message_id: found[0] for message_id, found in tokens.items()}
    assert len(set(tokens.values())) == 300  # one link per message, none shared
    assert all(len(t) == links.LONG_TOKEN_LENGTH and set(t) <= set(links.TOKEN_ALPHABET) for t in tokens.values())
    marks = ",".join("?" * len(ids))
    stored = _on_disk(path, f"SELECT token, message_id, account, recipient FROM links WHERE kind = 'unsubscribe' "
                            f"AND message_id IN ({marks})", tuple(ids))
    assert sorted(stored) == sorted((tokens[m], m, "demo", to[ids.index(m)]) for m in ids)
    page = httpx.get(f"{sb.base_url}/u/{tokens[ids[7]]}")
    assert page.status_code == 200 and to[7] in page.text


def test_a_link_used_twice_in_one_message_is_one_link(sandbox):
    sb, path = sandbox
    answer = _send(sb, {"from": "Shop", "to": ["34600911111", "34600911112"], "message": "{UNSUB_URL} or {UNSUB_URL}"})
    assert answer.status_code == 202, answer.text
    ids = [item["id"] for item in answer.json()["result"]]
    for message_id, text in _texts(sb, ids).items():
        first, second = TOKEN.findall(text)
        assert first == second
        assert _on_disk(path, "SELECT token FROM links WHERE message_id = ?", (message_id,)) == [(first,)]


def test_a_landing_page_and_its_sms_share_the_message_s_unsubscribe_link(sandbox):
    sb, path = sandbox
    answer = _send(sb, {"from": "Shop", "to": ["34600922222"], "message": "Offer {LAND_URL} stop {UNSUB_URL}",
                        "templateBody": "<p>Hi</p><a href='{UNSUB_URL}'>stop</a>"}, channel="landingsms")
    assert answer.status_code == 202, answer.text
    message_id = answer.json()["result"][0]["id"]
    text = _texts(sb, [message_id])[message_id]
    (token,) = TOKEN.findall(text)
    (page,) = _on_disk(path, "SELECT html FROM links WHERE kind = 'landing' AND message_id = ?", (message_id,))
    assert TOKEN.findall(page[0]) == [token]


def test_a_refused_request_stores_no_link(sandbox):
    sb, path = sandbox
    before = _on_disk(path, "SELECT COUNT(*) FROM links")[0][0]
    long_text = "x" * 200 + " {UNSUB_URL}"  # more than one part: every recipient is refused
    answer = _send(sb, {"from": "Shop", "to": ["34600933331", "34600933332"], "message": long_text, "parts": 1})
    assert answer.status_code == 400, answer.text
    assert _on_disk(path, "SELECT COUNT(*) FROM links")[0][0] == before


def test_refused_recipients_of_a_partly_accepted_request_leave_no_link(sandbox):
    sb, path = sandbox
    before = _on_disk(path, "SELECT COUNT(*) FROM links")[0][0]
    answer = _send(sb, {"from": "Shop", "to": ["34600944441", "34600944442", "not-a-phone"],
                        "message": "Hi {name} {UNSUB_URL}", "sub": [{"name": "a"}, {}, {"name": "c"}]})
    assert answer.status_code == 207, answer.text
    accepted = [item["id"] for item in answer.json()["result"] if item["accepted"]]
    assert len(accepted) == 1
    assert _on_disk(path, "SELECT COUNT(*) FROM links")[0][0] == before + 1
    assert _on_disk(path, "SELECT message_id FROM links WHERE rowid = (SELECT MAX(rowid) FROM links)") == [
        (accepted[0],)]


def test_new_tokens_are_distinct_evenly_spread_characters_of_the_alphabet():
    for length in (links.SHORT_CODE_LENGTH, links.LONG_TOKEN_LENGTH):
        tokens = links.new_tokens(5000, length)
        assert len(tokens) == len(set(tokens)) == 5000
        assert {len(t) for t in tokens} == {length}
        counts = collections.Counter("".join(tokens))
        assert set(counts) == set(links.TOKEN_ALPHABET)
        expected = 5000 * length / len(links.TOKEN_ALPHABET)  # ~645 (8) or ~968 (12) of each
        assert all(abs(n - expected) < 0.25 * expected for n in counts.values()), counts


def test_a_token_another_request_took_meanwhile_is_replaced_everywhere_it_was_used():
    db = store.connect(":memory:")
    store.create_schema(db, links.SCHEMA)
    made = links.NewLinks("http://127.0.0.1:8080/", "2026-11-21T09:30:00+00:00")
    unsubscribe = made.unsubscribe("m1", account="demo", recipient="34600955555")
    made.landing("m1", f"<a href='{unsubscribe}'>stop</a>")
    taken = unsubscribe.rsplit("/", 1)[1]
    with db:  # another request stored the same token first
        db.execute("INSERT INTO links(token, kind, message_id, created_at) VALUES (?, 'landing', 'other', 'x')",
                   (taken,))
    with db:
        replaced = made.store(db)
    (new,) = replaced.values()
    assert list(replaced) == [unsubscribe] and new != unsubscribe and len(new) == len(unsubscribe)
    new_token = new.rsplit("/", 1)[1]
    assert db.execute("SELECT kind, message_id, recipient FROM links WHERE token = ?", (new_token,)).fetchone() == (
        "unsubscribe", "m1", "34600955555")
    assert db.execute("SELECT message_id FROM links WHERE token = ?", (taken,)).fetchone() == ("other",)
    (page,) = db.execute("SELECT html FROM links WHERE kind = 'landing' AND message_id = 'm1'").fetchone()
    assert page == f"<a href='{new}'>stop</a>"


def test_a_message_refused_after_its_links_were_made_gives_them_back():
    made = links.NewLinks("http://127.0.0.1:8080", "2026-11-21T09:30:00+00:00")
    made.unsubscribe("m1", account="demo", recipient="1")
    mark = made.mark()
    first = made.short("m2", "https://shop.example/a")
    made.unsubscribe("m2", account="demo", recipient="2")
    made.discard(mark)
    assert [row[2] for row in made.rows] == ["m1"]
    assert made.short("m2", "https://shop.example/a") != first  # made anew, not the discarded one


def test_long_tokens_of_one_request_share_the_clock_prefix_and_end_in_distinct_random_characters():
    made = links.NewLinks("http://127.0.0.1:8080/", "2026-11-21T09:30:00+00:00")
    tokens = [made.unsubscribe(f"m{i}", account="demo", recipient=f"3460095{i:04d}").rsplit("/", 1)[1]
              for i in range(2000)]
    assert {len(t) for t in tokens} == {links.LONG_TOKEN_LENGTH}
    assert all(set(t) <= set(links.TOKEN_ALPHABET) for t in tokens)
    assert len({t[:links.TIME_PREFIX_LENGTH] for t in tokens}) == 1  # one request: one place in the token index
    assert len({t[links.TIME_PREFIX_LENGTH:] for t in tokens}) == 2000


def test_the_clock_prefix_sorts_like_the_time_it_encodes():
    tenth = 100_000_000
    prefixes = [links.time_prefix(n * tenth) for n in (0, 1, 61, 62, 63, 3843, 3844, 62**4 - 1)]
    assert prefixes == sorted(prefixes) and len(set(prefixes)) == len(prefixes)
    assert links.time_prefix(62**4 * tenth) == links.time_prefix(0)  # wraps after about 17 days
