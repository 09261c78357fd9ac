"""The durable runner of pending work: carrier steps from ``work`` and delivery notifications.

An asyncio task in the server's loop. Each round it applies a batch of the steps that fell due
(:class:`~sendframe.sandbox.steps.StepRunner`) and sends the due notifications through ``state.notifier``
(failed ones retried after ``RETRY_DELAYS``). A real-clock sandbox on a database file runs both in processes
of its own instead, so they use the machine's other core: the steps process (``steps_process``), woken by each
accepted request, and the notifier process (``notifier_process``), woken by the steps process; this worker
starts them, starts again one that ended, and stops them with the sandbox. Everything lives in SQLite, so a new
sandbox on the same database resumes where the old one stopped.

    worker = Worker(state); await worker.start()   # in the server's lifespan
    await worker.advance(60)                       # manual clock: run all that falls due
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from sendframe.sandbox import store
from sendframe.sandbox.child_process import ChildProcess, wake_pipe
from sendframe.sandbox.notification_rounds import next_notification_due, send_due_notifications
from sendframe.sandbox.notifier_process import NotifierProcess
from sendframe.sandbox.reports import notification_urls
from sendframe.sandbox.state import DEFER_SLEEP, SandboxState, busy_pause, busy_since, due_cutoff, idle_wait
from sendframe.sandbox.steps import STEP_BATCH, Round, StepRunner, apply_step, plan_message, plan_request
from sendframe.sandbox.steps_process import StepsProcess

__all__ = ["STEP_BATCH", "Round", "Worker", "apply_step", "notification_urls", "plan_message", "plan_request"]

log = logging.getLogger("sendframe.sandbox.worker")


class Worker:
    """Runs due steps and notifications of one sandbox, itself or through its helper processes; see the module
    docstring."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state
        self.steps = StepRunner(state)  # the rounds this worker runs itself (no steps process)
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._notifier_process: NotifierProcess | None = None
        self._steps_process: StepsProcess | None = None
        self._pipe: tuple[int, int] | None = None  # the steps process wakes the notifier process through it

    @property
    def notifier_pid(self) -> int | None:
        """The process id of the notifier process, or None when this worker sends the notifications itself."""
        return self._notifier_process.pid if self._notifier_process is not None else None

    @property
    def steps_pid(self) -> int | None:
        """The process id of the steps process, or None when this worker runs the steps itself."""
        return self._steps_process.pid if self._steps_process is not None else None

    def _helpers(self) -> list[ChildProcess]:
        return [p for p in (self._steps_process, self._notifier_process) if p is not None]

    async def start(self) -> None:
        """Start the background loop (call from the server's event loop), and the steps and notifier processes
        of a real-clock sandbox on a database file."""
        wake = self.state.wake = asyncio.Event()
        self.state.worker = self
        state = self.state
        if state.clock.mode == "real" and store.is_file(state.db_path):
            read, write = self._pipe = wake_pipe()
            networks = [str(network) for network in state.notifier.allow_networks]
            self._notifier_process = NotifierProcess(state.db_path, allow_networks=networks, wake_fd=read)
            self._steps_process = StepsProcess(state.db_path, state.carrier, notifier_wake_fd=write)
            for helper in self._helpers():
                helper.start()
            self._task = asyncio.create_task(self._relay(wake), name="sendframe-sandbox-worker")
        else:
            self._task = asyncio.create_task(self._loop(wake), name="sendframe-sandbox-worker")

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold off the rounds of steps while the caller changes the database (``/_sandbox/reset``): a steps
        process is stopped (after its round) and started again afterwards."""
        async with self._lock:
            self.steps.forget()
            process = self._steps_process
            if process is None:
                yield
                return
            await process.stop()
            try:
                yield
            finally:
                process.start()

    async def stop(self) -> None:
        """Stop the background loop and the helper processes (the steps process first: it wakes the notifier);
        pending work stays in the database."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for helper in self._helpers():
            await helper.stop()
        if self._pipe is not None:
            for fd in self._pipe:
                os.close(fd)
            self._pipe = None

    async def _relay(self, wake: asyncio.Event) -> None:
        """With helper processes: pass each wake-up (a request accepted) on to the steps process, and start again
        a helper that ended (checked at least once a second)."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await wake.wait()
            woken = wake.is_set()
            wake.clear()  # before passing it on: a request accepted from now on wakes this loop again
            async with self._lock:  # not while a reset has the steps process stopped
                if woken and self._steps_process is not None:
                    self._steps_process.wake()
                for helper in self._helpers():
                    ended = helper.restart_if_ended()
                    if ended is not None:
                        log.error("the sandbox's %s process ended (exit status %s): started again", helper.name, ended)

    async def _loop(self, wake: asyncio.Event) -> None:
        while True:
            try:
                started = time.monotonic()
                if await self._background_round():
                    # one batch at a time: requests get in between batches; while the API is busy, overdue work
                    # takes at most BUSY_SHARE of the loop
                    await asyncio.sleep(busy_pause(time.monotonic() - started) if self.busy() else 0)
                    continue
                if self.busy():
                    await asyncio.sleep(DEFER_SLEEP)
                    continue
                real = self.state.clock.mode == "real"
                timeout = idle_wait(self.next_due() if real else None, self.state.clock.now().timestamp())
                wake.clear()
                # not wait_for: on Python 3.11 it swallows a cancel (stop()) that comes as the wake is set
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await wake.wait()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # keep serving; the round was rolled back whole, the work stays due
                store.log_round_failure(log, "sandbox worker", error, self.state.db_path)
                await asyncio.sleep(0.5)

    def busy(self) -> bool:
        """Whether the API is busy accepting: a send request arrived within ``BUSY_WINDOW`` (real clock only)."""
        state = self.state
        return state.clock.mode == "real" and busy_since(state.last_send)

    async def _background_round(self) -> Counter[str]:
        """One batch of due steps and one of due notifications; while :meth:`busy`, only work overdue by
        more than ``MAX_DEFERRAL`` (so accepting goes first, and delivery never starves)."""
        async with self._lock:
            moment = self.state.clock.now().timestamp()
            cutoff = due_cutoff(moment, self.busy())
            done = self.steps.apply(moment, cutoff)
            done.update(await self._send_notifications(moment, cutoff=cutoff))
            return done

    def next_due(self) -> float | None:
        """The earliest due time (epoch seconds) of pending steps and notifications, or ``None``."""
        step = self.steps.next_due()
        note = next_notification_due(self.state.db)
        times = [t for t in (step, note) if t is not None]
        return min(times) if times else None

    async def run_due(self, at: float | None = None) -> Counter[str]:
        """Apply every step and send every notification due at ``at`` (default: now); return counts."""
        async with self._lock:
            return await self._run_due(at)

    async def _run_due(self, at: float | None, since: float | None = None) -> Counter[str]:
        done: Counter[str] = Counter()
        while True:
            moment = at if at is not None else self.state.clock.now().timestamp()
            steps = self.steps.apply(moment)
            sent = await self._send_notifications(moment, since)
            done.update(steps)
            done.update(sent)
            if not steps and not sent:
                return done

    async def advance(self, seconds: float) -> dict[str, Any]:
        """Move a manual clock by ``seconds`` and run everything that falls due on the way.

        Every step keeps its own due time (events, statuses and reports are dated by it, in due order
        per message), and a notification attempt counts as made at its due time (a failed one is retried
        ``RETRY_DELAYS`` after that), so the reports of many due times go out together, concurrently,
        instead of one stop per due time.
        """
        clock = self.state.clock
        async with self._lock:  # the background loop must not run a round with the clock half-way
            start = clock.now().timestamp()
            clock.advance(seconds)
            target = clock.now().timestamp()
            done = await self._run_due(target, since=start)
        return {"now": store.iso(clock.now()), "done": dict(done), "pending": self.pending()}

    def pending(self) -> dict[str, int]:
        """How much is still waiting: steps and notifications."""
        db = self.state.db
        steps = ("SELECT COALESCE(SUM(CASE kind WHEN 'group' THEN json_array_length(payload) "
                 "WHEN 'plans' THEN json_array_length(payload, '$.messages') ELSE 1 END), 0) FROM work")
        return {"steps": db.execute(steps).fetchone()[0],
                "notifications": db.execute("SELECT COUNT(*) FROM notifications WHERE state = 'pending'").fetchone()[0]}

    # ------------------------------------------------------------ notifications

    async def _send_notifications(self, moment: float, since: float | None = None,
                                  cutoff: float | None = None) -> Counter[str]:
        """One round of due reports (:func:`send_due_notifications`)."""
        return await send_due_notifications(self.state.db, self.state.notifier, moment, since=since, cutoff=cutoff)
