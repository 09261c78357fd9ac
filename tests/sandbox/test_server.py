"""The Sandbox context manager and the `sendframe sandbox` command."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pandas as pd
import pytest

from sendframe.sandbox import Sandbox
from sendframe.sandbox.accounts import parse_account_spec
from sendframe.sandbox.command import default_db_path
from sendframe.api.errors import ConfigurationError


def test_sandbox_serves_on_a_free_loopback_port_with_the_demo_account():
    with Sandbox() as sb:
        assert sb.base_url.startswith("http://127.0.0.1:")
        assert (sb.username, sb.api_password) == ("demo", "demo-password")
        assert "demo-password" not in repr(sb)
        r = httpx.post(f"{sb.base_url}/api/rest/sms", auth=(sb.username, sb.api_password),
                       json={"message": "x", "to": ["447700900001"], "from": "Shop"})
        assert r.status_code == 202
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{sb.base_url}/openapi.json")


def test_messages_frame_has_snake_case_columns_and_tz_aware_timestamps():
    with Sandbox(clock="manual") as sb:
        httpx.post(f"{sb.base_url}/api/rest/sms", auth=(sb.username, sb.api_password),
                   json={"message": "x", "to": ["447700900001"], "from": "Shop", "expirationDate": "20991121093000"})
        frame = sb.messages()
    assert {"id", "channel", "recipient", "status", "is_delivered", "cost", "events", "created_at"} <= set(frame.columns)
    assert isinstance(frame["created_at"].dtype, pd.DatetimeTZDtype)
    assert str(frame["expires_at"].iloc[0]) == "2099-11-21 09:30:00+00:00"
    assert frame["is_delivered"].dtype == bool


def test_two_sandboxes_run_side_by_side_with_separate_memory_databases():
    with Sandbox(clock="manual") as one, Sandbox(clock="manual") as two:
        httpx.post(f"{one.base_url}/api/rest/sms", auth=(one.username, one.api_password),
                   json={"message": "x", "to": ["447700900001"], "from": "Shop"})
        assert len(one.messages()) == 1 and two.messages().empty


def test_account_specs_enable_sms_only_unless_channels_are_named():
    assert parse_account_spec("ana:pw").channels == frozenset({"sms"})
    assert parse_account_spec("ana:pw:voice,email").channels == frozenset({"sms", "voice", "mailing"})
    assert "pw" not in repr(parse_account_spec("ana:pw"))
    with pytest.raises(ConfigurationError, match="unknown channel"):
        parse_account_spec("ana:pw:fax")
    with pytest.raises(ConfigurationError):
        parse_account_spec("ana")


def test_default_database_honours_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "sendframe" / "sandbox.sqlite"


def test_the_command_prints_its_base_url_and_serves_it(tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-m", "sendframe.cli", "sandbox", "--port", "0", "--db", str(tmp_path / "s.sqlite"),
                                "--clock", "manual", "--account", "ana:pw:voiceAudio"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        r = httpx.post(f"{base_url}/api/rest/voiceAudio", auth=("ana", "pw"),
                       json={"to": ["447700900001"], "audioUrl": "https://x.example/a.mp3"})
        assert r.status_code == 202
        assert httpx.post(f"{base_url}/_sandbox/advance", json={"seconds": 1}).status_code == 200
    finally:
        process.terminate()
        process.wait(10)
    assert (tmp_path / "s.sqlite").exists()


@pytest.mark.slow
def test_the_benchmark_runs_quick_and_prints_its_ratios():
    script = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "bench_sandbox.py")
    done = subprocess.run([sys.executable, script, "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ratio (batched / naive)" in done.stdout and "peak memory" in done.stdout
