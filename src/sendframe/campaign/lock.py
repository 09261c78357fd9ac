"""One run per ledger at a time: a ``filelock`` lock on the sibling file ``<ledger>.lock``.

Two runs sending with one ledger at once could both find a row unsent and both send it, so a send
holds this lock from before it reads the ledger until its last answer is recorded. A second run fails
at once, naming the ledger. The lock belongs to the process (an OS lock, ``flock`` on POSIX): a run
that is killed never leaves the ledger locked, and the ``.lock`` file left on disk means nothing by itself.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.sqlite")
    >>> with hold(path):
    ...     with hold(path):  # doctest: +ELLIPSIS +IGNORE_EXCEPTION_DETAIL
    ...         pass
    Traceback (most recent call last):
    ...
    sendframe.campaign.lock.LedgerInUseError: The ledger ... is in use by another run ...
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

from filelock import FileLock, Timeout

from sendframe.errors import LedgerInUseError, full_disk_error

__all__ = ["hold"]


def _holder(lock_path: str) -> str:
    """' (process N)' when the lock file names the process holding it, else ''."""
    with contextlib.suppress(OSError), open(lock_path, "rb") as file:
        text = file.read(32).decode("ascii", "replace").strip()
        return f" (process {text})" if text.isdigit() else ""
    return ""


@contextlib.contextmanager
def hold(ledger_path: str) -> Iterator[None]:
    """Hold the lock of the ledger at ``ledger_path`` while the block runs; nothing for ``:memory:``.

    Raises :class:`LedgerInUseError` at once when another run (another process, or another thread
    of this one) holds it, and an ``OSError`` naming the lock file when it cannot be created (a
    read-only folder, a full disk, a folder that does not exist).

        >>> with hold(":memory:"):
        ...     pass
    """
    if ledger_path == ":memory:" or ledger_path.startswith("file::memory:") or not ledger_path:
        yield
        return
    lock_path = ledger_path + ".lock"
    lock = FileLock(lock_path, blocking=False)
    try:
        if not os.path.isdir(os.path.dirname(os.path.abspath(lock_path))):  # filelock would create it: a typo
            raise FileNotFoundError(errno.ENOENT, "no such folder")
        held = lock.acquire()
        with open(lock_path, "r+b") as file:  # filelock does not truncate it: the holder is readable to a second run
            file.truncate(0)
            file.write(str(os.getpid()).encode("ascii"))
    except Timeout:
        raise LedgerInUseError(
            f"The ledger {ledger_path} is in use by another run{_holder(lock_path)}: two runs sending with one "
            "ledger at once could send a row twice. Wait for the other run to finish (or stop it), then run again "
            f"(the lock is held on {lock_path}).") from None
    except OSError as exc:
        lock.release()
        advice = f"the lock file of the ledger {ledger_path} cannot be written, so nothing was sent; free space and " \
                 "run again with the same ledger."
        raise full_disk_error(exc, lock_path, advice) or type(exc)(
            exc.errno, f"The lock file {lock_path} of the ledger {ledger_path} cannot be created or written "
            f"({exc.strerror or exc}): the ledger's folder must be writable and have free space", lock_path) from exc
    with held:
        yield
