"""The helper processes of a real-clock sandbox on a database file: the steps process runs the carrier's rounds and
the notifier process sends the reports; neither outlives its sandbox (stopped, interrupted or killed; embedded or
as ``sendframe sandbox``), and one that dies is started again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from sendframe.delivery.receiver import Receiver
from sendframe.sandbox import Sandbox

FINAL = {"DELIVRD", "UNDELIV", "EXPIRED", "REJECTD", "DELETED"}


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def ends_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def children(pid: int) -> list[int]:
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def send(base_url: str, count: int, url: str) -> None:
    with httpx.Client(base_url=base_url, auth=("demo", "demo-password"), timeout=60) as client:
        for start in range(0, count, 500):
            to = [f"4479{n:08d}" for n in range(start, min(start + 500, count))]
            client.post("/api/rest/sms", json={"message": "Hi", "to": to, "from": "Shop",
                                               "notificationUrl": url}).raise_for_status()


def test_a_real_clock_sandbox_on_a_file_runs_its_steps_and_sends_its_reports_from_its_helper_processes(tmp_path):
    count = 600
    with Sandbox(db=str(tmp_path / "s.sqlite"), clock="real") as sb, Receiver(tmp_path / "cb.log") as receiver:
        assert sb.state is not None
        pid, steps = sb.state.worker.notifier_pid, sb.state.worker.steps_pid
        assert {pid, steps} <= set(children(os.getpid())) and pid != steps and running(pid) and running(steps)
        send(sb.base_url, count, receiver.notification_url)
        deadline = time.monotonic() + 60
        while receiver.notifications < 2 * count and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # a report sent twice would arrive by now
        callbacks = receiver.callbacks()
        notes = [n for row in sb.messages()["notifications"] for n in row]
    assert not running(pid) and not running(steps)  # stopped with the sandbox
    statuses = callbacks.groupby("id", sort=False)["status"].agg(list)
    assert len(callbacks) == 2 * count and len(statuses) == count
    assert all(s[0] == "ACCEPTD" and s[1] in FINAL for s in statuses)
    assert {(n["state"], n["attempts"]) for n in notes} == {("sent", 1)}


@pytest.mark.parametrize(("db", "clock"), [(":memory:", "real"), ("file", "manual")])
def test_a_sandbox_in_memory_or_on_a_manual_clock_runs_its_steps_and_sends_its_reports_itself(tmp_path, db, clock):
    with Sandbox(db=str(tmp_path / "s.sqlite") if db == "file" else db, clock=clock) as sb:
        assert sb.state is not None
        assert sb.state.worker.notifier_pid is None and sb.state.worker.steps_pid is None


def _command(tmp_path: Path) -> tuple[subprocess.Popen[str], list[int], str]:
    process = subprocess.Popen([sys.executable, "-m", "sendframe.cli", "sandbox", "--port", "0",
                                "--db", str(tmp_path / "s.sqlite")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    base_url = process.stdout.readline().strip()
    assert base_url.startswith("http://127.0.0.1:")
    helpers = children(process.pid)  # the steps process and the notifier process
    assert len(helpers) == 2 and all(running(helper) for helper in helpers)
    return process, helpers, base_url


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "term", "kill"])
def test_the_helper_processes_end_with_sendframe_sandbox_however_it_ends(tmp_path, how):
    process, helpers, _ = _command(tmp_path)
    try:
        process.send_signal(how)
        process.wait(20)
        assert all(ends_within(helper, 10) for helper in helpers)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for helper in filter(running, helpers):
            os.kill(helper, signal.SIGKILL)


@pytest.mark.parametrize("helper", ["notifier_pid", "steps_pid"])
def test_a_helper_process_that_dies_is_started_again_and_the_reports_go_out(tmp_path, helper):
    with Sandbox(db=str(tmp_path / "s.sqlite"), clock="real") as sb, Receiver(tmp_path / "cb.log") as receiver:
        assert sb.state is not None
        first = getattr(sb.state.worker, helper)
        os.kill(first, signal.SIGKILL)
        assert ends_within(first, 10)
        send(sb.base_url, 50, receiver.notification_url)
        deadline = time.monotonic() + 30
        while receiver.notifications < 100 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert receiver.notifications == 100
        second = getattr(sb.state.worker, helper)
        assert second not in (None, first) and running(second)
    assert not running(second)


def test_a_reset_while_the_steps_process_works_empties_the_sandbox_and_the_next_send_flows(tmp_path):
    with Sandbox(db=str(tmp_path / "s.sqlite"), clock="real") as sb, Receiver(tmp_path / "cb.log") as receiver:
        assert sb.state is not None
        send(sb.base_url, 3000, receiver.notification_url)
        sb.reset()  # the steps process is stopped after its round, then started again
        assert sb.messages().empty and sb.state.worker.pending() == {"steps": 0, "notifications": 0}
        steps = sb.state.worker.steps_pid
        assert steps is not None and running(steps)
        send(sb.base_url, 20, receiver.notification_url)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            notes = sb.messages()["notifications"]
            if all(len(row) == 2 and all(n["state"] == "sent" for n in row) for row in notes):
                break
            time.sleep(0.1)
        messages = sb.messages()
    assert len(messages) == 20  # nothing of the first send came back after the reset
    assert all(len(row) == 2 and all(n["state"] == "sent" for n in row) for row in messages["notifications"])


def test_a_sandbox_killed_while_notifying_resumes_and_loses_no_report(tmp_path):
    count = 10_000  # enough that the kill lands mid-delivery even on a loaded machine (6,000 could all arrive first)
    receiver = Receiver(tmp_path / "cb.log").start()
    try:
        process, helpers, base_url = _command(tmp_path)
        send(base_url, count, receiver.notification_url)
        deadline = time.monotonic() + 60
        while receiver.notifications < 200 and time.monotonic() < deadline:
            time.sleep(0.01)
        process.kill()  # mid-delivery: the rounds in flight are not recorded
        process.wait(10)
        assert all(ends_within(helper, 10) for helper in helpers)
        assert receiver.notifications < 2 * count
        again, _, _ = _command(tmp_path)
        try:
            deadline = time.monotonic() + 90
            while len(receiver.callbacks()) < 2 * count and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            again.send_signal(signal.SIGINT)
            again.wait(20)
        callbacks = receiver.callbacks()
    finally:
        receiver.stop()
    statuses = callbacks.groupby("id", sort=False)["status"].agg(list)  # each report once, in arrival order
    assert len(callbacks) == 2 * count and len(statuses) == count  # every ACCEPTD and final report: none lost
    assert all(s[0] == "ACCEPTD" and s[1] in FINAL for s in statuses)
    assert callbacks.attrs.get("duplicates_dropped", 0) <= 4000  # sent again: at most the round the kill cut short
