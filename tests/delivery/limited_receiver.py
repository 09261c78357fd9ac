"""``sendframe receive`` in a child process whose file size limit the test lowers, so a commit fails part-way
as on a full disk (the operating system's own failure: RLIMIT_FSIZE, EFBIG)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

CHILD = r"""
import resource, signal, sys
from sendframe.delivery.receiver import Receiver

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond the limit fails with EFBIG instead of killing us
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
with Receiver(sys.argv[1]) as receiver:
    print(receiver.notification_url, flush=True)
    for command in sys.stdin:
        name, *value = command.split()
        soft = int(value[0]) if name == "limit" else hard
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        print("ok", flush=True)
"""


@contextlib.contextmanager
def limited_receiver(log: Path) -> Iterator[tuple[str, Callable[[str], None]]]:
    """The receiver's notificationUrl and ``tell``: ``tell("limit N")`` caps the log at N bytes, ``tell("unlimit")``
    lifts the cap. The child must end cleanly when the test is done."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(log)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    stdin, stdout = child.stdin, child.stdout

    def tell(command: str) -> None:
        stdin.write(command + "\n")
        stdin.flush()
        assert stdout.readline().strip() == "ok"

    try:
        yield stdout.readline().strip(), tell
    finally:
        stdin.close()
        assert child.wait(timeout=30) == 0
