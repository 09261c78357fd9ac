"""Memory the allocators keep after a large step, handed back to the system.

pyarrow's default memory pool (mimalloc or jemalloc) keeps the pages of freed buffers for its next
allocations, each thread that allocated in a heap of its own; glibc's malloc (where numpy, Python, httpx
and pyarrow's system pool allocate) keeps freed pages in its arenas, one per thread that allocated, until
``malloc_trim``. After reading a million contacts, callbacks or records the process held about as much
freed memory as live data, which the next step (another allocator, another thread) could not reuse.
The steps that make the large frames (``read_contacts``, ``read_callbacks``, ``send``, ``fetch_records``,
``outcomes``) give it back when they end: at 200k records, fetch_records kept 230 MiB besides its 59 MiB
of frames before. The next step gets pages from the system again, in a few milliseconds.

glibc raises its mmap threshold each time a large block is freed (up to 32 MiB), after which a step's
temporaries come from the heap. Fixing the threshold at 128 KiB (every large buffer mapped on its own) lowered
the rehearsal's end by about 100 MiB at 200k contacts, but made each numpy-sized temporary a fresh mapping that
the kernel zeroes: the Composer's keystroke went from 3.6 to 12.6 ms at 100k rows and a pandas estimate took
twice as long. It is not done; ``malloc_trim`` at the end of each large step gives those pages back instead.

glibc also gives every thread that allocates an arena of its own, up to eight per core, and each arena keeps its
own freed pages: the threads of the send, the callback parser and the lookups each left one behind. When this
module is first imported, new threads share at most ``ARENAS`` arenas (``mallopt(M_ARENA_MAX)``, unless the user
set ``MALLOC_ARENA_MAX``). In the 1M rehearsal (``benchmarks/rehearsal.py 1000000``, two runs each) the client's
peak went from 1,516 and 1,530 to 1,487 and 1,467 MiB, the send and fetch_records taking the same time
within the runs' noise.

When this module is first imported (by the first of those steps) pyarrow's default pool becomes the system
allocator (unless the user chose one with ``ARROW_DEFAULT_MEMORY_POOL``): mimalloc kept the freed pages of each
thread that allocated (pyarrow's own CSV and JSON readers', the send's and the lookups') where only that thread
could release them. The Composer's keystroke takes the same time either way.
"""

from __future__ import annotations

import ctypes
import os
import sys

import pyarrow as pa

__all__ = ["ARENAS", "release_unused_memory"]

# glibc's malloc_trim (Linux); None elsewhere (macOS and musl give freed memory back by themselves or lack it)
_LIBC = ctypes.CDLL(None) if sys.platform.startswith("linux") else None
_MALLOC_TRIM = getattr(_LIBC, "malloc_trim", None)
_MALLOPT = getattr(_LIBC, "mallopt", None)
_M_ARENA_MAX = -8  # glibc's malloc.h
ARENAS = 2
if _MALLOPT is not None and "MALLOC_ARENA_MAX" not in os.environ:
    _MALLOPT(_M_ARENA_MAX, ARENAS)
if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
    pa.set_memory_pool(pa.system_memory_pool())


def release_unused_memory() -> None:
    """Hand back to the system the memory pyarrow's default pool and malloc keep of freed buffers.

    A pool the user chose is released for the calling thread's heap (mimalloc) or as a whole (jemalloc):
    a worker thread that allocated calls it before it ends.

        >>> release_unused_memory()
    """
    pa.default_memory_pool().release_unused()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
