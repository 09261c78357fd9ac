"""Memory the allocators keep after a large step, handed back to the system.

pyarrow's default memory pool (mimalloc or jemalloc) keeps the pages of freed buffers for its next
allocations, each thread that allocated in a heap of its own; glibc's malloc (where numpy, Python, httpx
and pyarrow's system pool allocate) keeps freed pages in its arenas, one per thread that allocated, until
``malloc_trim``. After reading a million contacts, callbacks or records the process held about as much
freed memory as live data, which the next step (another allocator, another thread) could not reuse.
The steps that make the large frames (``read_contacts``, ``read_callbacks``, ``send``, ``fetch_records``,
``outcomes``) give it back when they end: at 200k records, fetch_records kept 230 MiB besides its 59 MiB
of frames before. The next step gets pages from the system again, in a few milliseconds.

glibc also raises its mmap threshold each time a large block is freed (up to 32 MiB), after which the
columns and temporaries of a step come from the heap, where what is freed among live blocks stays
resident. So the threshold is fixed at its initial 128 KiB when this module is first imported (by the
first of those steps), and every large buffer is mapped on its own and given back when freed: at 200k
contacts the rehearsal ended 139 MiB lower. Nothing else changes (glibc only; a call costs nothing).

On the same import pyarrow's default pool becomes the system allocator (unless the user chose one with
``ARROW_DEFAULT_MEMORY_POOL``): mimalloc kept the freed pages of each thread that allocated (pyarrow's
own CSV and JSON readers', the send's and the lookups') where only that thread could release them; with
malloc and the fixed threshold the rehearsal at 200k contacts peaked at 536 MiB instead of 631, in the
same CPU time.
"""

from __future__ import annotations

import ctypes
import os
import sys

import pyarrow as pa

__all__ = ["release_unused_memory"]

# glibc's malloc_trim (Linux); None elsewhere (macOS and musl give freed memory back by themselves or lack it)
_LIBC = ctypes.CDLL(None) if sys.platform.startswith("linux") else None
_MALLOC_TRIM = getattr(_LIBC, "malloc_trim", None)
_MALLOPT = getattr(_LIBC, "mallopt", None)
_M_MMAP_THRESHOLD, _MMAP_THRESHOLD = -3, 128 * 1024  # glibc's malloc.h; its initial (dynamic) threshold
if _MALLOPT is not None:  # setting it stops glibc from raising it (see above)
    _MALLOPT(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
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
