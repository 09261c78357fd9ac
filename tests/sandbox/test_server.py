"""The Sandbox context manager and the `sendframe sandbox` command."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys

import httpx
import pandas as pd
import pytest

from sendframe.errors import ConfigurationError
from sendframe.sandbox import Sandbox
from sendframe.sandbox.accounts import parse_account_spec
from sendframe.sandbox.command import default_db_path

from .notification_receiver import NotificationReceiver


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
    expected = {"id", "channel", "recipient", "status", "is_delivered", "cost", "events", "created_at"}
    assert expected <= set(frame.columns)
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
    process = subprocess.Popen([sys.executable, "-m", "sendframe.cli", "sandbox", "--port", "0",
                                "--db", str(tmp_path / "s.sqlite"), "--clock", "manual",
                                "--account", "ana:pw:voiceAudio"],
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


# ------------------------------------------------------------------ --carrier-config, --allow-callback-network
ALL_UNDELIVERED = {"seed": 7, "profiles": {"34": {"name": "ES-down", "delivery_rate": 0, "undelivered_rate": 1,
                                                  "rejected_rate": 0}}}


def _outbound_address() -> str:
    """This machine's non-loopback address (the one it would use to leave the host), e.g. 10.0.3.4."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 9))  # UDP: nothing is sent
        return probe.getsockname()[0]


def _send_and_advance(base_url: str, notification_url: str) -> list[dict]:
    sms = {"message": "x", "to": ["34600000001"], "from": "Shop", "notificationUrl": notification_url}
    assert httpx.post(f"{base_url}/api/rest/sms", auth=("demo", "demo-password"), json=sms).status_code == 202
    assert httpx.post(f"{base_url}/_sandbox/advance", json={"seconds": 600}, timeout=60).status_code == 200
    return httpx.get(f"{base_url}/_sandbox/messages").json()["data"]


def test_the_command_takes_a_carrier_config_and_callback_networks(tmp_path):
    config = tmp_path / "carrier.json"
    config.write_text(json.dumps(ALL_UNDELIVERED))
    address = _outbound_address()
    process = subprocess.Popen([sys.executable, "-m", "sendframe.cli", "sandbox", "--port", "0", "--db", ":memory:",
                                "--clock", "manual", "--carrier-config", str(config),
                                "--allow-callback-network", "203.0.113.0/24",
                                "--allow-callback-network", f"{address}/32"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "XDG_DATA_HOME": str(tmp_path)})
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        with NotificationReceiver(address) as receiver:
            records = _send_and_advance(base_url, receiver.url + "?s=%s")
    finally:
        process.terminate()
        process.wait(10)
    assert records[0]["status"] == "UNDELIV"  # the file's profile for 34, not the built-in 97 % delivered
    assert receiver.statuses() == ["ACCEPTD", "UNDELIV"]  # reached an address outside loopback


def test_the_sandbox_takes_the_same_carrier_config_and_networks_as_keywords(tmp_path):
    config = tmp_path / "carrier.json"
    config.write_text(json.dumps(ALL_UNDELIVERED))
    address = _outbound_address()
    with NotificationReceiver(address) as receiver:
        with Sandbox(clock="manual", carrier_config=config, allow_networks=[f"{address}/32"]) as sb:
            records = _send_and_advance(sb.base_url, receiver.url + "?s=%s")
            assert sb.state.carrier.seed == 7
        assert records[0]["status"] == "UNDELIV" and receiver.statuses() == ["ACCEPTD", "UNDELIV"]
        with Sandbox(clock="manual", carrier_config=config, seed=3) as sb:
            records = _send_and_advance(sb.base_url, receiver.url + "?s=%s")
            assert sb.state.carrier.seed == 3  # an explicit seed wins over the file's
        if ipaddress.ip_address(address).is_private:  # without the network, a private address is refused
            assert records[0]["status"] == "UNDELIV" and receiver.statuses() == ["ACCEPTD", "UNDELIV"]


def test_a_bad_carrier_config_or_network_stops_the_command_before_it_listens(tmp_path):
    config = tmp_path / "carrier.json"
    config.write_text(json.dumps({"profiles": {"34": {"delivery_rate": "high"}}}))
    for extra in (["--carrier-config", str(config)], ["--allow-callback-network", "10.0.0.0/99"]):
        command = [sys.executable, "-m", "sendframe.cli", "sandbox", "--port", "0", "--db", ":memory:", *extra]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "XDG_DATA_HOME": str(tmp_path)})
        assert done.returncode == 1 and done.stdout == ""
        assert ("profiles.34.delivery_rate" in done.stderr) or ("10.0.0.0/99" in done.stderr and "CIDR" in done.stderr)
