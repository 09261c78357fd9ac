"""Start ``sendframe sandbox`` in its own process for a benchmark, so its CPU is measured apart.

    process, base_url = start_sandbox(["--db", str(folder / "sandbox.sqlite")])
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def start_sandbox(options: list[str], *, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """Run ``sendframe sandbox --port 0 OPTIONS`` and return the process and the base URL it printed."""
    command = [sys.executable, "-m", "sendframe.cli", "sandbox", "--port", "0", *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env={**os.environ, **(env or {})})
    base_url = (process.stdout.readline() if process.stdout else "").strip()
    if not base_url.startswith("http"):
        process.kill()
        raise SystemExit("the sandbox did not start (no base URL printed)")
    return process, base_url


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
