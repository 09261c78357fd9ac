"""Fixtures shared across the test folders."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from sendframe.api.client import Client
from sendframe.api.retry import RetryPolicy
from sendframe.sandbox import Sandbox

# retries with tiny delays, so fault-injection tests stay fast
FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def sb():
    """A real sandbox on a free loopback port, shared by the tests of one module."""
    with Sandbox() as running:
        yield running


@pytest.fixture
def client(sb):
    """A Client of ``sb`` with fast retries; faults injected by the test are cleared before and after."""
    sb.clear_faults()
    with Client(sb.base_url, sb.username, sb.api_password, retry=FAST_RETRY) as c:
        yield c
    sb.clear_faults()


class SmallDisk:
    """A real, small file system (tmpfs) mounted at ``path``: ``fill()`` takes every free byte, ``free()`` gives
    them back. What sendframe writes there meets the kernel's own ENOSPC, as on a full disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / "filler"

    def fill(self) -> None:
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for chunk in (64 * 1024, 4096, 1):
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * chunk)
        finally:
            os.close(fd)
        assert os.statvfs(self.path).f_bavail == 0

    def free(self) -> None:
        self._filler.unlink(missing_ok=True)


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs of the test's own (mounting needs root, CAP_SYS_ADMIN; elsewhere the test is skipped, and the
    same behaviour is covered by the tests that fill SQLite with ``PRAGMA max_page_count`` or write to /dev/full)."""
    where = tmp_path / "disk"
    where.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(where)],
                                 capture_output=True, text=True, check=False)
    except FileNotFoundError:  # no mount command (not Linux)
        pytest.skip("cannot mount a small file system here: no mount command")
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here (needs root): {mounted.stderr.strip()}")
    try:
        yield SmallDisk(where)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)
