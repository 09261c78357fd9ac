"""Work in a background thread (the Composer's send, the Monitor's refreshes): the caller gets control back at once,
sees progress, may cancel.

No widgets here. :class:`BackgroundJob` runs a function ``work(progress, cancel)`` (in the Composer:
:meth:`sendframe.Message.send` with ``progress=`` and ``cancel=``; in the Monitor: its refresh loop) in a
thread; the job itself is the tqdm-compatible progress handed to it, calling back on every batch; the
result, or the error, is kept for the caller. Warnings raised in that thread are kept on the job instead
of being printed into whichever notebook cell happens to be running.

    >>> import threading
    >>> job = BackgroundJob(lambda progress, cancel: (progress.reset(total=2), progress.update(2))[-1])
    >>> job.start().wait(5), job.n, job.error
    (True, 2, None)
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["BackgroundJob"]

logger = logging.getLogger(__name__)

# in a job's thread, ``warnings``: the list its warnings are kept in (other threads have none)
_SINK = threading.local()


def _route_warnings() -> None:
    """Keep the warnings of job threads on their job; every other thread's go where they went before."""
    shown = warnings.showwarning
    if getattr(shown, "sendframe_router", False):
        return

    def router(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None,
               line: str | None = None) -> None:
        sink = getattr(_SINK, "warnings", None)
        if sink is None:
            shown(message, category, filename, lineno, file, line)
        else:
            sink.append(warnings.WarningMessage(message, category, filename, lineno, file, line))

    router.sendframe_router = True  # type: ignore[attr-defined]
    warnings.showwarning = router


class BackgroundJob:
    """Run ``work(progress, cancel)`` in a daemon thread; calls ``on_progress(n, total)`` and ``on_done(job)`` from it.

    ``progress`` is the job itself, tqdm-compatible: ``reset(total=)`` then ``update(n)`` move ``n`` and
    ``total`` and call ``on_progress``. ``result`` holds what ``work`` returned, ``error`` what it raised
    (never re-raised: the caller shows it), ``warnings`` the warnings it raised. :meth:`cancel` sets the
    event handed to ``work``.

        >>> seen = []
        >>> job = BackgroundJob(lambda progress, cancel: None, on_progress=lambda n, total: seen.append((n, total)))
        >>> job.reset(total=10); job.update(4); seen
        [(0, 10), (4, 10)]
    """

    def __init__(self, work: Callable[[BackgroundJob, threading.Event], Any], *,
                 on_progress: Callable[[int, int | None], None] | None = None,
                 on_done: Callable[[BackgroundJob], None] | None = None,
                 name: str = "sendframe-background-job") -> None:
        self._work = work
        self._on_progress, self._on_done = on_progress or (lambda n, total: None), on_done or (lambda job: None)
        self.n = 0
        self.total: int | None = None
        self._lock = threading.Lock()
        self.cancel_event = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.warnings: list[warnings.WarningMessage] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> BackgroundJob:
        """Start the thread; returns at once."""
        _route_warnings()
        self._thread.start()
        return self

    def reset(self, total: int | None = None) -> None:
        """Start over towards ``total`` items (tqdm's interface)."""
        with self._lock:
            self.n, self.total = 0, total
        self._on_progress(self.n, self.total)

    def update(self, n: int = 1) -> None:
        """``n`` more items done (tqdm's interface)."""
        with self._lock:
            self.n += n
        self._on_progress(self.n, self.total)

    def close(self) -> None:
        """Nothing to release (tqdm's interface)."""

    @property
    def running(self) -> bool:
        """True from :meth:`start` until ``work`` has returned or raised and ``on_done`` has run."""
        return self._thread.ident is not None and not self._done.is_set()

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self.cancel_event.is_set()

    def cancel(self) -> None:
        """Set the event handed to ``work`` (a send starts no new batch; batches in flight finish and are recorded)."""
        self.cancel_event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work has ended (``on_done`` included); False if ``timeout`` seconds passed first."""
        return self._done.wait(timeout)

    def _run(self) -> None:
        _SINK.warnings = self.warnings
        try:
            self.result = self._work(self, self.cancel_event)
        except Exception as exc:  # shown by on_done in plain English; the traceback only in the debug log
            self.error = exc
            logger.debug("background job failed", exc_info=True)
        finally:
            del _SINK.warnings
            try:
                self._on_done(self)
            except Exception:  # a display failure must not print a traceback from the thread
                logger.debug("showing the end of a background job failed", exc_info=True)
            finally:
                self._done.set()
