"""Kill drill: `sendframe receive` SIGKILLed three times during a burst keeps every acknowledged notification."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from sendframe.delivery.callbacks import read_callbacks


def start_receiver(log, token):
    process = subprocess.Popen(
        [sys.executable, "-m", "sendframe.cli", "receive", "--log", str(log), "--token", token],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    return process, url.split("?")[0]


@pytest.mark.slow
def test_sigkill_three_times_during_a_burst_keeps_every_acknowledged_notification(tmp_path):
    log = tmp_path / "callbacks.log"
    token = "drill-token-0123456789abcdef"
    process, url = start_receiver(log, token)
    current = {"url": url}
    acknowledged: set[str] = set()
    lock = threading.Lock()
    stop = threading.Event()

    def sender(worker: int) -> None:
        n = 0
        with httpx.Client(timeout=2.0) as client:
            while not stop.is_set():
                message_id = f"w{worker}-{n}"
                try:
                    answer = client.get(f"{current['url']}?id={message_id}&status=DELIVRD&delivery=1")
                except httpx.HTTPError:
                    time.sleep(0.02)
                    continue  # not acknowledged: the service would retry the same notification
                if answer.status_code == 200:
                    with lock:
                        acknowledged.add(message_id)
                    n += 1

    threads = [threading.Thread(target=sender, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(3):
            time.sleep(1.0)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            process, current["url"] = start_receiver(log, token)
        time.sleep(1.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    frame = read_callbacks(log)
    assert len(acknowledged) > 100
    assert acknowledged <= set(frame["id"])
    assert frame.attrs["junk_lines"] == 0  # nothing half-written survives a restart
