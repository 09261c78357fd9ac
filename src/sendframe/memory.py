"""Memory the allocators keep after a large step, handed back to the system.

pyarrow's default memory pool (mimalloc or jemalloc) keeps the pages of freed buffers for its next
allocations, and each thread that allocated has a heap of its own: after reading a million contacts
or records the process holds about as much freed Arrow memory as live data, which pandas' and numpy's
own allocations (through malloc) cannot use. The steps that make the large frames (``read_contacts``,
``send``, ``fetch_records``, ``outcomes``) give it back when they end; the freed pages are reused anyway
when the next Arrow step needs them, so nothing is slower.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["release_unused_memory"]


def release_unused_memory() -> None:
    """Hand back to the system the memory pyarrow's default pool keeps of freed buffers.

        >>> release_unused_memory()
    """
    pa.default_memory_pool().release_unused()
