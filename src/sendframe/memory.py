"""Memory the allocators keep after a large step, handed back to the system.

pyarrow's default memory pool (mimalloc or jemalloc) keeps the pages of freed buffers for its next
allocations, each thread that allocated in a heap of its own; glibc's malloc (where numpy, Python, httpx
and pyarrow's system pool allocate) keeps freed pages in its arenas, one per thread that allocated, until
``malloc_trim``. After reading a million contacts, callbacks or records the process held about as much
freed memory as live data, which the next step (another allocator, another thread) could not reuse.
The steps that make the large frames (``read_contacts``, ``read_callbacks``, ``send``, ``fetch_records``,
``outcomes``) give it back when they end: at 200k records, fetch_records kept 230 MiB besides its 59 MiB
of frames before. The next step gets pages from the system again, in a few milliseconds.
"""

from __future__ import annotations

import ctypes
import sys

import pyarrow as pa

__all__ = ["release_unused_memory"]

# glibc's malloc_trim (Linux); None elsewhere (macOS and musl give freed memory back by themselves or lack it)
_MALLOC_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None) if sys.platform.startswith("linux") else None


def release_unused_memory() -> None:
    """Hand back to the system the memory pyarrow's default pool and malloc keep of freed buffers.

    pyarrow's pool is released for the calling thread's heap (mimalloc) or the whole pool (jemalloc):
    a worker thread that allocated calls it before it ends.

        >>> release_unused_memory()
    """
    pa.default_memory_pool().release_unused()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
