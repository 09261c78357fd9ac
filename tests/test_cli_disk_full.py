"""The files the commands write (``--out``, ``sendframe report``) on a full disk: one line naming the file, exit
code 1, no traceback, and no torn file left to be read as if it were whole.

The disk is full for real: /dev/full (every write fails with the kernel's ENOSPC), or a small tmpfs filled to its
last byte where the tests may mount one.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from sendframe.cli import main
from sendframe.errors import DiskFullError
from sendframe.notebook.report import Dashboard

ROOT = Path(__file__).resolve().parents[1]
CONTACTS = ROOT / "data" / "contacts.csv"


def one_line(err: str, command: str, path: str | Path) -> bool:
    return (err.count("\n") == 1 and "Traceback" not in err
            and err.startswith(f"sendframe {command}: The disk holding {path} is full: "))


def test_preview_out_on_a_full_disk_names_the_file_in_one_line(capsys):
    assert main(["preview", str(CONTACTS), "--message", "Hi {name}", "--out", "/dev/full"]) == 1
    err = capsys.readouterr().err
    assert one_line(err, "preview", "/dev/full"), err
    assert "run the same command again" in err
    assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)  # a device is never removed as a torn file


def test_estimate_out_on_a_disk_that_is_full_leaves_no_torn_file(small_disk, capsys):
    out = small_disk.path / "estimate.csv"
    small_disk.fill()
    assert main(["estimate", str(CONTACTS), "--message", "Hi {name}", "--out", str(out)]) == 1
    assert one_line(capsys.readouterr().err, "estimate", out)
    assert not out.exists()
    small_disk.free()
    assert main(["estimate", str(CONTACTS), "--message", "Hi {name}", "--out", str(out)]) == 0
    assert out.stat().st_size > 0


def test_report_on_a_full_disk_names_the_file_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SENDFRAME_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SENDFRAME_USERNAME", "nobody")
    monkeypatch.setenv("SENDFRAME_API_PASSWORD", "not-used")
    results = tmp_path / "results.csv"
    assert main(["send", str(CONTACTS), "--message", "Hi {name}", "--sender", "Shop", "--dry-run", "--no-progress",
                 "--ledger", str(tmp_path / "l.sqlite"), "--out", str(results)]) == 0
    capsys.readouterr()
    assert main(["report", "--results", str(results), "--out", "/dev/full"]) == 1
    err = capsys.readouterr().err
    assert one_line(err, "report", "/dev/full"), err
    assert "the report was not written" in err


def test_a_dashboard_written_to_a_full_disk_raises_disk_full_and_leaves_no_torn_page(small_disk):
    page = small_disk.path / "report.html"
    small_disk.fill()
    with pytest.raises(DiskFullError) as caught:
        Dashboard({}, title="Q4").write_html(page)
    assert caught.value.path == str(page) and isinstance(caught.value, OSError)
    assert not page.exists()
