"""`sendframe preview | estimate | send` on the sample contacts (send against the real sandbox)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sendframe.campaign.command import default_ledger_path
from sendframe.cli import main
from sendframe.sandbox import Sandbox

CONTACTS = Path(__file__).resolve().parents[2] / "data" / "contacts.csv"
MESSAGE = "Hola {name|capitalize}, saldo {amount|formatDotComma} EUR"


def test_preview_prints_a_readable_table_and_writes_every_row(tmp_path, capsys):
    out = tmp_path / "preview.csv"
    assert main(["preview", str(CONTACTS), "--message", MESSAGE, "--rows", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Hola " in printed and "more rows" in printed
    written = pd.read_csv(out, dtype=str)
    assert len(written) == len(pd.read_csv(CONTACTS, dtype=str))
    assert list(written.columns) == ["phone", "text"]


def test_estimate_prints_totals_and_writes_the_per_row_frame(tmp_path, capsys):
    out = tmp_path / "estimate.csv"
    assert main(["estimate", str(CONTACTS), "--message", MESSAGE, "--encoding", "auto", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "billable" in printed and "EUR" in printed and "encodings:" in printed
    written = pd.read_csv(out)
    assert {"encoding", "parts", "cost", "forced_by", "lost_characters"} <= set(written.columns)
    assert set(written["encoding"].dropna()) <= {"gsm", "gsm-pt", "utf-16"}


def test_estimate_runs_as_a_console_command():
    proc = subprocess.run([sys.executable, "-m", "sendframe.cli", "estimate", str(CONTACTS), "--message", "Hi {name}", "--rows", "2"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "messages charged" in proc.stdout


def test_send_help_documents_the_default_ledger():
    proc = subprocess.run([sys.executable, "-m", "sendframe.cli", "send", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    for flag in ("--channel", "--message", "--from", "--campaign", "--batch-size", "--ledger", "--out", "--notification-url"):
        assert flag in proc.stdout
    assert "resum" in proc.stdout and "current folder" in proc.stdout


def test_default_ledger_depends_on_campaign_and_message():
    a = default_ledger_path("x/contacts.csv", "sms", "Hi", "Shop", None)
    assert a.name.startswith("contacts-") and a.parent == Path(".")
    assert default_ledger_path("x/contacts.csv", "sms", "Hi", "Shop", None) == a
    assert default_ledger_path("x/contacts.csv", "sms", "Hi!", "Shop", None) != a
    assert default_ledger_path("x/contacts.csv", "sms", "Hi", "Shop", "Spring sale").name.startswith("Spring-sale-")


def test_send_on_an_unsupported_channel_is_a_clear_error(capsys):
    assert main(["send", str(CONTACTS), "--channel", "voice", "--message", "Hi"]) == 1
    assert "send_voice" in capsys.readouterr().err


def test_send_sms_without_a_sender_is_a_clear_error(capsys):
    assert main(["send", str(CONTACTS), "--message", "Hi"]) == 1
    assert "--from" in capsys.readouterr().err


def test_send_dry_run_builds_every_request(tmp_path, monkeypatch):
    monkeypatch.setenv("SENDFRAME_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SENDFRAME_USERNAME", "nobody")
    monkeypatch.setenv("SENDFRAME_API_PASSWORD", "not-used")
    out = tmp_path / "dry.csv"
    code = main(["send", str(CONTACTS), "--message", "Hi {name}", "--from", "Shop", "--dry-run", "--no-progress",
                 "--ledger", str(tmp_path / "l.sqlite"), "--out", str(out)])
    assert code == 0
    written = pd.read_csv(out, dtype=str)
    assert len(written) == len(pd.read_csv(CONTACTS, dtype=str))
    assert set(written["outcome"]) == {"dry_run"}


def test_send_against_the_sandbox_writes_one_row_per_contact_and_resumes(tmp_path, monkeypatch, capsys):
    contacts = pd.read_csv(CONTACTS, dtype=str, keep_default_na=False, na_values=[""])
    with Sandbox() as sb:
        monkeypatch.setenv("SENDFRAME_BASE_URL", sb.base_url)
        monkeypatch.setenv("SENDFRAME_USERNAME", sb.username)
        monkeypatch.setenv("SENDFRAME_API_PASSWORD", sb.api_password)
        monkeypatch.chdir(tmp_path)
        out = tmp_path / "results.csv"
        argv = ["send", str(CONTACTS), "--channel", "sms", "--message", "Hola {name}", "--from", "Shop",
                "--campaign", "spring", "--batch-size", "50", "--out", str(out), "--no-progress"]
        assert main(argv) == 0
        results = pd.read_csv(out, dtype=str)
        assert len(results) == len(contacts)
        accepted = results["outcome"] == "accepted"
        assert 150 < accepted.sum() < len(contacts)
        assert set(results.loc[~accepted, "error_code"]) == {"102"}
        sent = len(sb.messages())
        assert sent == accepted.sum()
        ledgers = list(tmp_path.glob("spring-*.ledger.sqlite"))
        assert len(ledgers) == 1  # the default ledger, in the current folder
        # the same command again resumes from the ledger: nothing is sent twice
        assert main(argv) == 0
        assert len(sb.messages()) == sent
        again = pd.read_csv(out, dtype=str)
        assert again["id"].fillna("").tolist() == results["id"].fillna("").tolist()
    assert "accepted" in capsys.readouterr().out
