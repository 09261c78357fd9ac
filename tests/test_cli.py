"""The `sendframe` command dispatches to subcommands and speaks plain English."""

from __future__ import annotations

import subprocess
import sys

from sendframe.cli import SUBCOMMANDS, main


def test_help_lists_every_subcommand(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in out


def test_each_subcommand_has_its_own_help():
    for name in SUBCOMMANDS:
        proc = subprocess.run([sys.executable, "-m", "sendframe.cli", name, "--help"], capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)
        assert "usage: sendframe " + name in proc.stdout
