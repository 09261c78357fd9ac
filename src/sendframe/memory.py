"""Memory the allocators keep after a large step, handed back to the system.

pyarrow's default memory pool (mimalloc or jemalloc) keeps the pages of freed buffers for its next
allocations, and each thread that allocated has a heap of its own: after reading a million contacts
or records the process holds about as much freed Arrow memory as live data, which pandas' and numpy's
own allocations (through malloc) cannot use; with the system pool, malloc keeps them (this hands them back
through ``malloc_trim``). The steps that make the large frames (``read_contacts``, ``read_callbacks``,
``send``, ``fetch_records``, ``outcomes``) give it back when they end: at 200k callbacks, read_callbacks
kept 80 MiB besides its 58 MiB frame before. The next Arrow step gets pages from the system again, in
a few milliseconds.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["release_unused_memory"]


def release_unused_memory() -> None:
    """Hand back to the system the memory pyarrow's default pool keeps of freed buffers.

        >>> release_unused_memory()
    """
    pa.default_memory_pool().release_unused()
