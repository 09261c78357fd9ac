"""The sandbox: a reference implementation of the messaging service (``sendframe sandbox``).

    >>> from sendframe.sandbox import Sandbox
    >>> with Sandbox() as sb:                     # doctest: +SKIP
    ...     print(sb.base_url)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Sandbox"]

if TYPE_CHECKING:
    from sendframe.sandbox.server import Sandbox


def __getattr__(name: str) -> Any:
    if name == "Sandbox":
        from sendframe.sandbox.server import Sandbox

        return Sandbox
    raise AttributeError(f"module 'sendframe.sandbox' has no attribute {name!r}")
