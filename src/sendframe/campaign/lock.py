"""One run per ledger at a time: an OS lock on the sibling file ``<ledger>.lock``.

Two runs sending with one ledger at once could both find a row unsent and both send it, so a send
holds this lock from before it reads the ledger until its last answer is recorded. A second run fails
at once, naming the ledger. The lock belongs to the process: a run that is killed never leaves the
ledger locked, and the ``.lock`` file left on disk means nothing by itself.

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
import os
from collections.abc import Iterator

from sendframe.errors import LedgerInUseError

__all__ = ["hold"]


def _try_lock(fd: int) -> bool:
    """Take an exclusive lock on the open file ``fd`` without waiting; False when another holds it."""
    try:
        import fcntl  # noqa: PLC0415  a platform module: POSIX only, tried where the lock is taken
    except ImportError:  # Windows: lock the first byte
        import msvcrt  # noqa: PLC0415  a platform module: Windows only

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        # flock, not fcntl() record locks: SQLite's own record locks on the ledger are left alone
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    try:
        import fcntl  # noqa: PLC0415  a platform module: POSIX only, tried where the lock is taken
    except ImportError:
        import msvcrt  # noqa: PLC0415  a platform module: Windows only

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


def _holder(fd: int) -> str:
    """' (process N)' when the lock file names the process holding it, else ''."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (process {text})" if text.isdigit() else ""


@contextlib.contextmanager
def hold(ledger_path: str) -> Iterator[None]:
    """Hold the lock of the ledger at ``ledger_path`` while the block runs; nothing for ``:memory:``.

    Raises :class:`LedgerInUseError` at once when another run (another process, or another thread
    of this one) holds it.

        >>> with hold(":memory:"):
        ...     pass
    """
    if ledger_path == ":memory:" or ledger_path.startswith("file::memory:") or not ledger_path:
        yield
        return
    lock_path = ledger_path + ".lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_lock(fd):
            raise LedgerInUseError(
                f"The ledger {ledger_path} is in use by another run{_holder(fd)}: two runs sending with one ledger "
                "at once could send a row twice. Wait for the other run to finish (or stop it), then run again "
                f"(the lock is held on {lock_path}).")
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, str(os.getpid()).encode("ascii"))
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
