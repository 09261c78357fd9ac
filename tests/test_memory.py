"""sendframe.memory: freed buffers go back to the system (glibc: large ones as soon as they are freed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from sendframe.memory import release_unused_memory


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc and /proc are Linux's")
def test_a_large_buffer_freed_leaves_the_process():
    # freeing a mapped 40 MiB block would make glibc raise its mmap threshold to 40 MiB: later 20 MiB buffers
    # would come from the heap and stay resident once freed, but for sendframe.memory fixing the threshold
    large = np.ones(40 << 17)  # 40 MiB of float64
    del large
    release_unused_memory()  # what a step left: given back before measuring
    before = resident_mib()
    for _ in range(3):
        block = np.ones(20 << 17)  # 20 MiB, touched
        del block
    assert resident_mib() - before < 10


@pytest.mark.skipif("ARROW_DEFAULT_MEMORY_POOL" in os.environ, reason="the user's choice of pool is kept")
def test_pyarrow_allocates_with_the_system_allocator():
    # mimalloc kept each thread's freed pages where only that thread could release them
    assert pa.default_memory_pool().backend_name == "system"
