"""Start ``sendframe sandbox`` and ``sendframe receive`` as a user would, in their own processes.

    process, base_url = start_sandbox(["--db", str(folder / "sandbox.sqlite")])
    receiver, notification_url = start_receiver(folder / "callbacks.log")
    ...
    print(peak_memory_mib(process.pid), cpu_seconds(process.pid), children(process.pid))
    stop(process); stop(receiver)
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["children", "cpu_seconds", "peak_memory_mib", "server_cpu_seconds", "start_receiver", "start_sandbox",
           "stop",
           "wait_until_idle"]


def _start(command: list[str], what: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """Run ``python -m sendframe.cli COMMAND`` and return the process and the first line it prints."""
    process = subprocess.Popen([sys.executable, "-m", "sendframe.cli", *command], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env={**os.environ, **(env or {})})
    first = (process.stdout.readline() if process.stdout else "").strip()
    if not first.startswith("http"):
        process.kill()
        raise SystemExit(f"{what} did not start (no address printed)")
    return process, first


def start_sandbox(options: list[str], *, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """Run ``sendframe sandbox --port 0 OPTIONS`` and return the process and the base URL it printed."""
    return _start(["sandbox", "--port", "0", *options], "the sandbox", env)


def start_receiver(log: str | os.PathLike[str], options: list[str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """Run ``sendframe receive --log LOG OPTIONS`` and return the process and the notificationUrl it printed."""
    return _start(["receive", "--log", os.fspath(log), *(options or [])], "the receiver")


def stop(process: subprocess.Popen[str], timeout: float = 30.0) -> None:
    """Ctrl-C the process (as a user stops it), then kill it if it does not end within ``timeout``."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def queued_seconds(pid: int) -> float:
    """Seconds the main thread of process ``pid`` has spent runnable but waiting for a core (Linux
    ``/proc/PID/schedstat``): what separates a process short of CPU from one with nothing to do."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int, timeout: float = 5.0) -> list[int]:
    """The child processes of ``pid`` (the sandbox's helper processes), waiting up to ``timeout`` s for one."""
    deadline = time.monotonic() + timeout
    while True:
        found = [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
                 for child in (task / "children").read_text().split()]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def helpers(pid: int) -> dict[str, int]:
    """The sandbox's helper processes by name, ``steps`` and ``notifier`` (told apart by their command lines),
    waiting up to 5 s for them to start; a helper of another kind is named by its pid."""
    named = {}
    for child in children(pid):
        command = Path(f"/proc/{child}/cmdline").read_bytes()
        kind = next((k for k in ("steps", "notifier") if f"sandbox.{k}_process".encode() in command), str(child))
        named[kind] = child
    return named


server_cpu_seconds = cpu_seconds  # the name the older benchmarks import


def peak_memory_mib(pid: int | None = None) -> float:
    """Peak resident memory (VmHWM) of process ``pid`` (this process when None), MiB."""
    for line in Path(f"/proc/{pid or 'self'}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def current_memory_mib(pid: int | None = None) -> float:
    """Resident memory now (VmRSS) of process ``pid`` (this process when None), MiB."""
    for line in Path(f"/proc/{pid or 'self'}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_until_idle(db_path: str | os.PathLike[str], limit: float = 900.0) -> float:
    """Seconds until the sandbox whose state file is ``db_path`` has no carrier step and no notification
    left to do, so a run that follows does not pay for the backlog of the one before. Reads the state file
    (read-only; the sandbox's own tables ``work`` and ``notifications``); a fixed pause when it cannot."""
    start = time.perf_counter()
    try:
        db = sqlite3.connect(f"file:{os.fspath(db_path)}?mode=ro", uri=True, timeout=30)
        try:
            while time.perf_counter() - start < limit:
                steps = db.execute("SELECT COUNT(*) FROM work").fetchone()[0]
                notifications = db.execute("SELECT COUNT(*) FROM notifications WHERE state = 'pending'").fetchone()[0]
                if not steps and not notifications:
                    break
                time.sleep(0.5)
        finally:
            db.close()
    except sqlite3.Error:
        time.sleep(10)
    return time.perf_counter() - start
