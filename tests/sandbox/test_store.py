"""The sandbox's SQLite layout: shared request values in sendings, read back through message_view."""

import os
import sqlite3
import stat

import httpx
import pytest

from sendframe.errors import ConfigurationError
from sendframe.sandbox import Sandbox, sending, store
from sendframe.sandbox.state import SandboxState


def test_a_database_of_an_older_layout_is_refused_with_a_plain_message(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE messages (id TEXT PRIMARY KEY, account TEXT, channel TEXT)")
    old.commit()
    old.close()
    with pytest.raises(ConfigurationError,
                       match=r"old.sqlite was written by another version of sendframe.*new --db file"):
        store.create_schema(store.connect(str(path)))


def test_a_database_of_this_layout_opens_again(tmp_path):
    path = str(tmp_path / "s.sqlite")
    store.create_schema(store.connect(path))
    store.create_schema(store.connect(path))
    assert store.connect(path).execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION


def test_values_a_message_does_not_share_with_its_request_are_kept_on_the_message():
    state = SandboxState.create(clock="manual")
    account = state.accounts["demo"]
    # per-recipient notification URLs, one of them empty: each message keeps its own
    sending.accept(state, account, "sms", {"message": "Hi", "from": "Shop", "to": ["447700900001", "447700900002"],
                                           "notificationUrl": ["http://a.example/?i=%i", ""]})
    # voice callers by country: the sender differs between the two messages
    sending.accept(state, account, "voice", {"message": "Hola", "to": ["34600123456", "447700900003"],
                                             "language": "es_ES", "gender": "M", "callers": {"34": "34911000000"}})
    rows = {r["recipient"]: r for r in store.message_rows(state.db)}
    assert rows["447700900001"]["notification_url"] == "http://a.example/?i=%i"
    assert rows["447700900002"]["notification_url"] == ""
    assert rows["34600123456"]["sender"] == "34911000000"
    assert rows["447700900003"]["sender"] == sending.DEFAULT_VOICE_CALLER
    assert {r["status"] for r in rows.values()} == {"QUEUED"} and {r["account"] for r in rows.values()} == {"demo"}


def test_the_state_file_and_its_journal_are_readable_by_their_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "sandbox.sqlite"
        with Sandbox(db=str(path), clock="manual") as sb:
            answer = httpx.post(f"{sb.base_url}/api/rest/sms", auth=(sb.username, sb.api_password),
                                json={"message": "Code {OTP_CODE}", "to": ["447700900001"], "from": "Shop"})
            assert answer.status_code == 202
            files = [p for p in tmp_path.iterdir() if p.name.startswith("sandbox.sqlite")]
            assert {p.name for p in files} >= {"sandbox.sqlite", "sandbox.sqlite-wal"}
            assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}
    finally:
        os.umask(old)
