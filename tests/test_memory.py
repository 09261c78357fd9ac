"""sendframe.memory: pyarrow allocates where freed buffers can be given back."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from sendframe.memory import release_mapped_pages


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif("ARROW_DEFAULT_MEMORY_POOL" in os.environ, reason="the user's choice of pool is kept")
def test_pyarrow_allocates_with_the_system_allocator():
    # mimalloc kept each thread's freed pages where only that thread could release them
    assert pa.default_memory_pool().backend_name == "system"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident memory from /proc")
def test_a_mapped_files_pages_leave_the_resident_memory_and_read_the_same_again(tmp_path):
    path = tmp_path / "log"
    path.write_bytes(bytes(range(256)) * (256 << 10))  # 64 MiB
    data = pa.memory_map(str(path)).read_buffer()
    before = resident_mib()
    total = int(np.frombuffer(data, np.uint8).sum(dtype=np.int64))  # every page read: resident
    assert resident_mib() - before > 48
    release_mapped_pages(data, 0, data.size)
    assert resident_mib() - before < 16
    assert int(np.frombuffer(data, np.uint8).sum(dtype=np.int64)) == total == 255 * 128 * (256 << 10)
