"""sendframe.memory: pyarrow allocates where freed buffers can be given back."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif("ARROW_DEFAULT_MEMORY_POOL" in os.environ, reason="the user's choice of pool is kept")
def test_pyarrow_allocates_with_the_system_allocator():
    # mimalloc kept each thread's freed pages where only that thread could release them
    assert pa.default_memory_pool().backend_name == "system"
