"""`sendframe preview | estimate | send` on the sample contacts (send against the real sandbox)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.command import message_ledger_path
from sendframe.campaign.contacts import read_contacts
from sendframe.cli import main
from sendframe.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
CONTACTS = ROOT / "data" / "contacts.csv"
MESSAGE = "Hola {name|capitalize}, saldo {amount|formatDotComma} EUR"


def test_preview_prints_a_readable_table_and_writes_every_row(tmp_path, capsys):
    out = tmp_path / "preview.csv"
    assert main(["preview", str(CONTACTS), "--message", MESSAGE, "--rows", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Hola " in printed and "more rows" in printed
    written = pd.read_csv(out, dtype=str)
    assert len(written) == len(pd.read_csv(CONTACTS, dtype=str))
    assert list(written.columns) == ["recipient", "text", "action", "reason"]
    assert written["action"].value_counts().to_dict() == {"send": len(written) - 7, "skipped_duplicate": 3,
                                                          "skipped_invalid": 4}


def test_estimate_prints_totals_and_writes_the_per_row_frame(tmp_path, capsys):
    out = tmp_path / "estimate.csv"
    assert main(["estimate", str(CONTACTS), "--message", MESSAGE, "--encoding", "auto", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "billable" in printed and "EUR" in printed and "encodings:" in printed
    written = pd.read_csv(out)
    assert {"encoding", "parts", "cost", "forced_by", "lost_characters"} <= set(written.columns)
    assert set(written["encoding"].dropna()) <= {"gsm", "gsm-pt", "utf-16"}


def test_estimate_prices_what_send_sends_leaving_out_repeated_recipients(tmp_path, capsys):
    out, kept = tmp_path / "estimate.csv", tmp_path / "kept.csv"
    assert main(["estimate", str(CONTACTS), "--message", "Hola {name}", "--out", str(out)]) == 0
    assert "3 whose recipient repeats an earlier row (skipped_duplicate)" in capsys.readouterr().out
    assert main(["estimate", str(CONTACTS), "--message", "Hola {name}", "--keep", "duplicate", "--out", str(kept)]) == 0
    written, counted = pd.read_csv(out), pd.read_csv(kept)
    assert len(written) == len(counted) == len(read_contacts(CONTACTS))  # one row per contact either way
    repeated = written["phone"].notna() & written["phone"].duplicated()
    assert repeated.sum() == 3 and written.loc[repeated, "cost"].isna().all()
    assert counted["cost"].sum() == pytest.approx(written["cost"].sum() + counted.loc[repeated, "cost"].sum())


def test_estimate_runs_as_a_console_command():
    proc = subprocess.run([sys.executable, "-m", "sendframe.cli", "estimate", str(CONTACTS), "--message", "Hi {name}",
                           "--rows", "2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "messages charged" in proc.stdout


def test_send_help_documents_the_default_ledger():
    proc = subprocess.run([sys.executable, "-m", "sendframe.cli", "send", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    for flag in ("--channel", "--message", "--sender", "--campaign-name", "--batch-size", "--ledger", "--out",
                 "--notification-url"):
        assert flag in proc.stdout
    assert "resum" in proc.stdout and "current folder" in proc.stdout


def test_default_ledger_depends_on_campaign_and_message():
    a = message_ledger_path("x/contacts.csv", sendframe.sms("Hi", "Shop"))
    assert a.name.startswith("contacts-") and a.parent == Path(".")
    assert message_ledger_path("x/contacts.csv", sendframe.sms("Hi", "Shop")) == a
    assert message_ledger_path("x/contacts.csv", sendframe.sms("Hi!", "Shop")) != a
    assert message_ledger_path("x/contacts.csv", sendframe.sms("Hi", "Shop", campaign_name="Spring sale")).name \
        .startswith("Spring-sale-")


@pytest.mark.parametrize(("channel", "flags", "error"), [
    ("voice", ["--message", "Hi"], "--language and --gender are required for --channel voice"),
    ("voice", ["--message", "Hi", "--language", "en_GB"], "--gender is required"),
    ("voice", ["--language", "en_GB", "--gender", "F"], "--message is required"),
    ("voiceAudio", [], "--audio-url is required for --channel voiceAudio"),
    ("voiceAudio", ["--audio-url", "https://example.org/a.mp3", "--message", "Hi"], "--message does not apply"),
    ("voiceAudio", ["--audio-url", "https://example.org/a.mp3", "--sender", "Shop"], "--sender does not apply"),
    ("whatsapp", ["--sender", "34911111111"], "--template-id is required for --channel whatsapp"),
    ("whatsapp", ["--template-id", "1002"], "--sender is required for --channel whatsapp"),
    ("mailing", ["--body", "<p>Hi</p>", "--subject", "Hi"], "--from-email is required"),
    ("mailing", ["--subject", "Hi", "--from-email", "a@example.org"],
     "--body (or --template-id or --template-v2-id) is required for --channel mailing"),
    ("landingsms", ["--message", "{LAND_URL}"], "--sender is required"),
])
def test_send_names_the_flag_a_channel_is_missing(channel, flags, error, capsys):
    assert main(["send", str(CONTACTS), "--channel", channel, *flags]) == 1
    assert error in capsys.readouterr().err


def test_send_sms_without_a_sender_is_a_clear_error(capsys):
    assert main(["send", str(CONTACTS), "--message", "Hi"]) == 1
    assert "--sender" in capsys.readouterr().err


def test_send_dry_run_builds_every_request(tmp_path, monkeypatch):
    monkeypatch.setenv("SENDFRAME_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SENDFRAME_USERNAME", "nobody")
    monkeypatch.setenv("SENDFRAME_API_PASSWORD", "not-used")
    out = tmp_path / "dry.csv"
    code = main(["send", str(CONTACTS), "--message", "Hi {name}", "--sender", "Shop", "--dry-run", "--no-progress",
                 "--ledger", str(tmp_path / "l.sqlite"), "--out", str(out)])
    assert code == 0
    written = pd.read_csv(out, dtype=str)
    assert len(written) == len(pd.read_csv(CONTACTS, dtype=str))
    assert written["outcome"].value_counts().to_dict() == {"dry_run": len(written) - 7, "skipped_duplicate": 3,
                                                           "skipped_invalid": 4}


def test_send_against_the_sandbox_writes_one_row_per_contact_and_resumes(tmp_path, monkeypatch, capsys):
    contacts = pd.read_csv(CONTACTS, dtype=str, keep_default_na=False, na_values=[""])
    with Sandbox() as sb:
        monkeypatch.setenv("SENDFRAME_BASE_URL", sb.base_url)
        monkeypatch.setenv("SENDFRAME_USERNAME", sb.username)
        monkeypatch.setenv("SENDFRAME_API_PASSWORD", sb.api_password)
        monkeypatch.chdir(tmp_path)
        out = tmp_path / "results.csv"
        argv = ["send", str(CONTACTS), "--channel", "sms", "--message", "Hola {name}", "--sender", "Shop",
                "--campaign-name", "spring", "--batch-size", "50", "--out", str(out), "--no-progress"]
        assert main(argv) == 0
        results = pd.read_csv(out, dtype=str)
        assert len(results) == len(contacts)
        # in input order
        assert results["recipient"].fillna("").tolist() == read_contacts(CONTACTS)["phone"].fillna("").tolist()
        skipped = results["outcome"].str.startswith("skipped_")
        # data/contacts.csv repeats three numbers (each gets one message) and has four numbers nobody can repair
        assert results.loc[skipped, "outcome"].value_counts().to_dict() == {"skipped_invalid": 4,
                                                                            "skipped_duplicate": 3}
        answer = ["id", "parts", "error_code", "batch"]
        assert results.loc[skipped, answer].isna().all().all() and results.loc[skipped, "reason"].notna().all()
        accepted = results["outcome"] == "accepted"
        assert 150 < accepted.sum() < len(contacts)
        assert set(results.loc[~accepted & ~skipped, "error_code"]) <= {"102"}
        sent = len(sb.messages())
        assert sent == accepted.sum()
        assert not sb.messages()["recipient"].duplicated().any()
        ledgers = list(tmp_path.glob("spring-*.ledger.sqlite"))
        assert len(ledgers) == 1  # the default ledger, in the current folder
        # the same command again resumes from the ledger: nothing is sent twice
        assert main(argv) == 0
        assert len(sb.messages()) == sent
        again = pd.read_csv(out, dtype=str)
        assert again["id"].fillna("").tolist() == results["id"].fillna("").tolist()
    printed = capsys.readouterr().out
    assert "accepted" in printed and "7 of 196 rows not sent" in printed and "(skipped_duplicate)" in printed


@pytest.fixture
def sandbox_env(tmp_path, monkeypatch):
    """A sandbox whose address and credentials the CLI reads from the environment; the test runs in tmp_path."""
    with Sandbox() as sb:
        monkeypatch.setenv("SENDFRAME_BASE_URL", sb.base_url)
        monkeypatch.setenv("SENDFRAME_USERNAME", sb.username)
        monkeypatch.setenv("SENDFRAME_API_PASSWORD", sb.api_password)
        monkeypatch.chdir(tmp_path)
        yield sb


CHANNEL_FLAGS = {
    "sms": ["--message", "Hola {name}", "--sender", "Shop"],
    "landingsms": ["--message", "Hola {name}: {LAND_URL}", "--sender", "Shop"],
    "mailing": ["--body", "<p>Hola {name}</p>", "--subject", "Hola {name}", "--from-email", "news@example.org"],
    "voice": ["--message", "Hola {name}", "--language", "es_ES", "--gender", "F"],
    "voiceAudio": ["--audio-url", "https://example.org/hola.mp3"],
    "whatsapp": ["--template-id", "1002", "--sender", "34911111111", "--body-fields", "name"],
}


@pytest.mark.parametrize("channel", list(CHANNEL_FLAGS))
def test_send_on_every_channel_reaches_the_sandbox_once_per_recipient(channel, sandbox_env, tmp_path, capsys):
    out = tmp_path / "results.csv"
    argv = ["send", str(CONTACTS), "--channel", channel, *CHANNEL_FLAGS[channel], "--out", str(out), "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    results = pd.read_csv(out, dtype=str)
    assert len(results) == len(read_contacts(CONTACTS))
    accepted = results["outcome"] == "accepted"
    assert accepted.sum() > 150
    assert (results["outcome"] == "skipped_duplicate").sum() == 3
    messages = sandbox_env.messages()
    assert set(messages["channel"]) == {channel}
    assert len(messages) == accepted.sum()
    assert not messages["recipient"].str.lower().duplicated().any()
    if channel == "whatsapp":
        assert sorted(results.loc[accepted, "id"]) == sorted(messages["id"])


def test_keep_duplicates_sends_repeated_recipients_again(sandbox_env, tmp_path, capsys):
    out = tmp_path / "results.csv"
    argv = ["send", str(CONTACTS), *CHANNEL_FLAGS["sms"], "--keep", "duplicate", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    results = pd.read_csv(out, dtype=str)
    assert "skipped_duplicate" not in set(results["outcome"])
    assert sandbox_env.messages()["recipient"].duplicated().sum() == 3
    assert "skipped_duplicate" not in capsys.readouterr().out


def test_a_failing_service_stops_the_send_and_the_same_command_finishes_it(sandbox_env, tmp_path, capsys):
    out = tmp_path / "results.csv"
    argv = ["send", str(CONTACTS), *CHANNEL_FLAGS["sms"], "--batch-size", "20", "--ledger", str(tmp_path / "c.sqlite"),
            "--out", str(out), "--no-progress"]
    sandbox_env.faults(status=500)  # answered without processing: the outcome is unknown to the client
    assert main([*argv, "--stop-after-unknown", "2"]) == 1
    first = pd.read_csv(out, dtype=str)
    assert (first["outcome"] == "unknown").sum() >= 40 and (first["outcome"] == "not_sent").sum() > 0
    err = capsys.readouterr().err
    assert "were not sent" in err and "--resend-unknown" in err
    assert "sendframe send: The service failed" in err and "Warning:" not in err  # warnings as plain lines
    assert sandbox_env.messages().empty
    sandbox_env.clear_faults()
    assert main(argv) == 1  # the rows never attempted are sent; the unknown ones wait to be checked
    second = pd.read_csv(out, dtype=str)
    assert (second["outcome"] == "unknown").sum() == (first["outcome"] == "unknown").sum()
    assert (second["outcome"] == "not_sent").sum() == 0
    assert main([*argv, "--resend-unknown"]) == 0
    final = pd.read_csv(out, dtype=str)
    assert set(final["outcome"]) == {"accepted", "skipped_invalid", "skipped_duplicate"}
    messages = sandbox_env.messages()
    assert len(messages) == (final["outcome"] == "accepted").sum() and not messages["recipient"].duplicated().any()


def _readme_commands() -> list[list[str]]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").replace("\\\n", " ").splitlines()
    return [shlex.split(line.strip())[1:] for line in lines if line.strip().startswith(".venv/bin/sendframe ")]


def test_the_readme_preview_and_estimate_lines_run_and_so_does_its_send_line_renamed(tmp_path, monkeypatch, capsys):
    (tmp_path / "data").mkdir()
    shutil.copy(CONTACTS, tmp_path / "data" / "contacts.csv")
    monkeypatch.chdir(tmp_path)  # the README's paths are relative to the repository
    commands: dict[str, list[str]] = {}
    for argv in _readme_commands():
        commands.setdefault(argv[0], argv)  # the first line of each: the SMS walk-through
    assert commands["preview"][1:] == commands["estimate"][1:] == commands["send"][1:8]  # the same inputs
    for name in ("preview", "estimate"):
        assert main(commands[name]) == 0, capsys.readouterr().err
        assert main([name, *commands["send"][1:]]) == 0, capsys.readouterr().err  # send's whole line, renamed
        written = pd.read_csv(tmp_path / "results.csv", dtype=str)  # its --out
        assert len(written) == len(read_contacts(CONTACTS))
        (tmp_path / "results.csv").unlink()
    assert not list(tmp_path.glob("*.sqlite"))  # --ledger is accepted, not created


def test_preview_reports_a_sender_label_send_would_refuse(capsys):
    assert main(["preview", str(CONTACTS), "--message", "Hi", "--sender", "My Shop!", "--rows", "1"]) == 0
    assert "--sender: the sender label must be" in capsys.readouterr().err


def test_preview_and_estimate_help_say_which_send_flags_are_accepted():
    for name in ("preview", "estimate"):
        proc = subprocess.run([sys.executable, "-m", "sendframe.cli", name, "--help"], capture_output=True, text=True)
        assert proc.returncode == 0
        assert "accepted for the same command line as send" in proc.stdout
        for flag in ("--sender", "--campaign-name", "--batch-size", "--ledger", "--out", "--notification-url",
                     "--keep"):
            assert flag in proc.stdout
