"""sendframe.memory: pyarrow allocates where freed buffers can be given back."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import sendframe.memory  # noqa: F401  (importing it sets the pool: the first large step does)


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif("ARROW_DEFAULT_MEMORY_POOL" in os.environ, reason="the user's choice of pool is kept")
def test_pyarrow_allocates_with_the_system_allocator():
    # mimalloc kept each thread's freed pages where only that thread could release them
    assert pa.default_memory_pool().backend_name == "system"


_COUNT_ARENAS = """
import ctypes, sys, tempfile, threading
import sendframe.memory
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fclose.argtypes = [ctypes.c_void_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
ready, done = threading.Barrier(9), threading.Event()
def allocate():
    held = [bytearray(1000) for _ in range(100)]  # malloc, from the arena this thread is given
    ready.wait()
    done.wait()
threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads:
    thread.start()
ready.wait()
path = tempfile.mktemp()
report = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, report)
libc.fclose(report)
done.set()
print(open(path).read().count("<heap nr="))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "mallopt"),
                    reason="glibc's arenas")
@pytest.mark.parametrize(("environment", "most"), [({}, 2), ({"MALLOC_ARENA_MAX": "4"}, 4)])
def test_threads_share_a_few_malloc_arenas_unless_the_user_set_how_many(environment, most):
    # eight threads allocating at once: glibc alone would give each an arena (up to eight per core)
    env = {key: value for key, value in os.environ.items() if key != "MALLOC_ARENA_MAX"} | environment
    arenas = int(subprocess.run([sys.executable, "-c", _COUNT_ARENAS], env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert 1 < arenas <= most


def test_without_the_limit_the_threads_would_have_more_arenas():
    # the check above could not fail if glibc never made more than two: with a high limit, it does
    env = os.environ | {"MALLOC_ARENA_MAX": "64"}
    arenas = int(subprocess.run([sys.executable, "-c", _COUNT_ARENAS], env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert arenas > 4
