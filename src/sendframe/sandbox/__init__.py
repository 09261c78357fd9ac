"""The sandbox: a reference implementation of the messaging service (``sendframe sandbox``).

    >>> from sendframe.sandbox import Sandbox
    >>> with Sandbox() as sb:                     # doctest: +SKIP
    ...     print(sb.base_url)
"""

from __future__ import annotations

from sendframe.sandbox.server import Sandbox

__all__ = ["Sandbox"]
