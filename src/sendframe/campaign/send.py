"""Send a campaign from a DataFrame: batches, bounded concurrency, rate limits, progress, a ledger.

    >>> import pandas as pd, sendframe
    >>> contacts = pd.DataFrame({"phone": ["447700900001", "447700900002"], "name": ["Ana", "Bo"]})
    >>> result = sendframe.send_sms(contacts, "Hi {name}", "Shop", ledger="spring.sqlite")  # doctest: +SKIP
    >>> result["outcome"].value_counts()  # doctest: +SKIP

Each batch's intent is committed to the ledger before its POST and its answer after, so a run
that is interrupted (even killed) can be run again with the same ledger: rows already answered
are skipped, rows whose fate is unknown are listed and only re-sent with ``resend_unknown=True``.
Rows are found in the ledger by label and recipient, so a contacts table exported again with its
labels moved is resumed without sending anyone twice (see :mod:`sendframe.campaign.ledger`). A run
holds the ledger's lock: a second run on the same ledger at the same time fails at once.

Each row's ``outcome``:

- ``accepted``: the service accepted it; ``rejected``: the service refused it (final, with the error);
- ``unknown``: sent, but no readable answer (a 5xx, a timeout or dropped connection after the request
  was written, an answer item for another recipient): it may or may not have been sent; check before
  re-sending with ``resend_unknown=True``;
- ``not_sent``: nothing was sent (a lasting 429, no connection, 401/403, 413, or the run stopped
  before its batch); running again with the same ledger sends it;
- ``dry_run``: ``dry_run=True``, nothing sent.

If ``stop_after_unknown`` batches in a row end with an unknown outcome the service is failing: no
new batch starts (those in flight finish), the rows not attempted are ``not_sent``, and a
:class:`CampaignStoppedWarning` says how many.

The sending runs on a private event loop in a worker thread, so it works the same from a script
and from inside Jupyter's running loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sendframe.api.client import AsyncClient, Client
from sendframe.api.wire import WireConfig, user_stacklevel
from sendframe.campaign.batching import Batch, CampaignSpec, Positions, TokenBucket, plan_batches
from sendframe.campaign.budget import Budget
from sendframe.campaign.ledger import Ledger
from sendframe.campaign.ledger_format import ROW_DTYPES
from sendframe.campaign.ledger_keys import tag_url
from sendframe.campaign.send_options import SendOptions
from sendframe.campaign.settling import GRACE
from sendframe.errors import (
    ApiError,
    AuthenticationError,
    CampaignStoppedWarning,
    InputError,
    NotSentError,
    SendframeWarning,
    UnknownOutcomeError,
)
from sendframe.memory import release_unused_memory
from sendframe.send_outcomes import OUTCOMES

__all__ = ["ANSWER_COLUMNS", "send_rows"]

ANSWER_COLUMNS = ("accepted", "id", "parts", "scheduled_at", "expires_at", "error_code", "error_description",
                  "campaign_id", "sending_id", "batch", "outcome")


@dataclass
class _Run:
    """What the sending loop reports back: why it stopped early, if it did (``failure``: raised once it ends)."""

    failure: Exception | None = None
    unknown_streak: int = 0
    tripped: bool = False
    last_unknown: str = ""
    not_attempted: int = 0


def _config_for(client: Client | AsyncClient | WireConfig | None) -> WireConfig:
    if client is None:
        return WireConfig.resolve()
    if isinstance(client, WireConfig):
        return client
    if isinstance(client, (Client, AsyncClient)):
        return client.config
    raise InputError(f"client must be a sendframe Client or AsyncClient, not {type(client).__name__}.")


async def _send_batches(spec: CampaignSpec, batches: Sequence[Batch], config: WireConfig, ledger: Ledger,
                        options: SendOptions, *, progress: Any, stop: threading.Event, budget: Budget | None) -> _Run:
    rps, pps, stop_after_unknown = options.requests_per_second, options.parts_per_second, options.stop_after_unknown
    request_bucket = TokenBucket(rps) if rps else None
    parts_bucket = TokenBucket(pps) if pps else None
    semaphore = asyncio.Semaphore(options.concurrency)
    run = _Run()

    def ended(unknown: bool, why: str = "") -> None:
        """Count batches ending unknown in a row (in the order they end); trip the breaker at the limit."""
        if not unknown:
            run.unknown_streak = 0
            return
        run.unknown_streak += 1
        run.last_unknown = why
        if stop_after_unknown and run.unknown_streak >= stop_after_unknown and not stop.is_set():
            run.tripped = True
            stop.set()  # no new batch starts; batches in flight finish and are recorded

    async def exchange(client: AsyncClient, batch: Batch) -> None:
        """The intent, the POST, the answer: each step recorded before the next."""
        encoded, keys, sent = batch.request()
        # the ledger's commits wait for the disk: in a thread, so other batches' answers keep flowing meanwhile
        await asyncio.to_thread(ledger.record_intent, batch.number, encoded.fingerprint,
                                list(zip(keys, sent, strict=True)))
        try:
            answer = await client.send_columns(spec.channel, encoded)
        except ApiError as exc:
            description = exc.description
            if isinstance(exc, UnknownOutcomeError):
                state = "unknown"
            elif isinstance(exc, (AuthenticationError, NotSentError)) or exc.status != 400:
                state = "not_sent"  # 401/403 (no point sending the rest), 413, a lasting 429: nothing processed
            else:
                state = "done"  # 400: rejected as a whole
            if isinstance(exc, AuthenticationError):
                stop.set()
                run.failure = run.failure or exc
            if isinstance(exc, NotSentError):
                description += " Nothing was sent; run again with the same ledger to retry."
            await asyncio.to_thread(ledger.record_failure, batch.number, state, exc.code, description, exc.status)
            if state != "not_sent":
                ended(state == "unknown", exc.description)
        else:
            unknown = await asyncio.to_thread(ledger.record_answer, batch.number, answer, sent=sent)
            ended(unknown > 0, f"{unknown} answer item(s) did not name the recipient sent at their position")

    async def send_one(client: AsyncClient, batch: Batch) -> None:
        async with semaphore:
            if not stop.is_set():
                if request_bucket:
                    await request_bucket.acquire(1)
                if parts_bucket:
                    await parts_bucket.acquire(batch.parts)
            if stop.is_set():
                run.not_attempted += len(batch.positions)  # no intent: the next run sends these rows
                return
            if budget is not None and not budget.take(batch.positions):
                progress.update(len(batch.positions))
                return
            try:
                await exchange(client, batch)
            # the ledger cannot record (a full disk), the batch's request breaks a rule, or anything unforeseen:
            # no new batch starts, batches in flight finish and are recorded, then the first failure is raised
            except Exception as exc:  # noqa: BLE001  raised once the loop ends
                run.failure = run.failure or exc
                stop.set()
                return
            progress.update(len(batch.positions))

    async with AsyncClient(config=config) as client:
        await asyncio.gather(*(send_one(client, batch) for batch in batches))
    return run


# the result outcome of each ledger state (a state and its outcome share a name)
_STATES = ("accepted", "rejected", "unknown", "not_sent", "dry_run")
_OUTCOME_OF_STATE = np.array([OUTCOMES.index(state) for state in _STATES])


def _typed_result(frame: pd.DataFrame, index: pd.Index) -> pd.DataFrame:
    def when(column: str) -> pd.Series:
        if frame[column].isna().all():  # the usual answer: sent now, no expiry
            return pd.Series(pd.NaT, index=frame.index, dtype="datetime64[us, UTC]")
        values = pd.to_datetime(frame[column], utc=True, format="ISO8601")
        return values.astype("datetime64[us, UTC]")

    state = pd.Categorical(frame["state"], categories=_STATES).codes
    outcome = np.where(state >= 0, _OUTCOME_OF_STATE[state], -1)
    accepted = frame["accepted"].astype("boolean")
    accepted = accepted.mask((state == _STATES.index("rejected")) | (state == _STATES.index("not_sent")), False)
    worked_out = {"accepted": accepted, "scheduled_at": when("scheduled_at"), "expires_at": when("expires_at"),
                  "outcome": pd.Categorical.from_codes(outcome, categories=pd.Index(OUTCOMES))}
    result = pd.DataFrame({name: worked_out[name] if name in worked_out else frame[name].astype(ROW_DTYPES[name])
                           for name in ANSWER_COLUMNS})
    result.index = index
    return result


def _dry_run_result(index: pd.Index, batches: Sequence[Batch], parts: Positions | None) -> pd.DataFrame:
    rows: dict[str, Any] = {column: [None] * len(index) for column in ANSWER_COLUMNS}  # a list each, not one shared
    number = np.full(len(index), np.nan)
    for batch in batches:
        batch.encoded  # noqa: B018  each request validated, as a send would before its POST
        number[batch.positions] = batch.number
    planned = ~np.isnan(number)
    rows["batch"] = number
    rows["state"] = pd.Series(["dry_run"] * len(index), dtype=object).where(planned, None)
    if parts is not None:
        rows["parts"] = np.where(planned, np.asarray(parts, dtype="float64"), np.nan)
    return _typed_result(pd.DataFrame(rows), index)


def send_rows(spec: CampaignSpec, index: pd.Index, options: SendOptions, *, parts: Positions | None = None,
              budget: Budget | None = None, identity: Mapping[str, Any] | None = None,
              settle: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Send every row of ``spec`` (no row left out: :class:`sendframe.Message` decides that), as ``options`` say.

    ``spec`` (:meth:`CampaignSpec.build`) holds the request fields, recipients and per-row variables;
    ``index`` labels its rows (the ledger keys rows by label). ``parts``: each row's SMS parts (for
    ``parts_per_second`` and a dry run's result; 1 per row when not given).
    The result is on ``index`` with the columns of :data:`ANSWER_COLUMNS`; ``outcome`` is
    accepted / rejected / unknown / not_sent (or dry_run), as the module docstring explains.

    ``options.ledger`` (a file) makes the campaign resumable; the run holds it, and a second run on the
    same file meanwhile raises ``LedgerInUseError``. ``options.stop_after_unknown``: after that many batches in a
    row end with an unknown outcome, no new batch starts (``None`` or 0: never stop). ``budget``
    (:class:`~sendframe.campaign.budget.Budget`, with a cost per row): no batch starts
    that would take the spend above its cap; its rows are ``not_sent`` and ``budget.left_out`` lists
    them. ``identity``: what the ledger checks before resuming (default: the channel, template, sender).

    An sms ``notificationUrl`` address is sent as one URL per row carrying the row's tag
    (:func:`~sendframe.campaign.ledger_keys.tag_url`), so a notification names the row it is about;
    ``settle`` (tag -> message id, from notifications) marks rows of unknown batches accepted before
    anything is sent (:meth:`Ledger.settle`).

        >>> spec = CampaignSpec.build(contacts, "sms", {"message": "Hi", "from": "Shop"})  # doctest: +SKIP
        >>> send_rows(spec, contacts.index, SendOptions(ledger="c.sqlite"))["outcome"].value_counts()  # doctest: +SKIP
    """
    if options.dry_run:
        return _dry_run_result(index, plan_batches(spec, range(len(index)), batch_size=options.batch_size, parts=parts),
                               parts)
    config = _config_for(options.client)
    owned = not isinstance(options.ledger, Ledger)
    journal = Ledger(":memory:" if options.ledger is None else options.ledger) if owned else options.ledger
    try:
        with journal.exclusive():
            journal.bind(identity if identity is not None else spec.identity())
            first_batch = journal.next_batch()
            pending: Positions = range(len(spec.keys))
            if first_batch > 1:
                journal.settle(settle or {})
                spec, pending, spent = _pending(journal, spec, options.resend_unknown)
                if budget is not None:
                    budget.count(spent)
            batches = plan_batches(_tagged(spec), pending, batch_size=options.batch_size, first_batch=first_batch,
                                   parts=parts)
            run = _send_with_progress(spec, batches, config, journal, options, total=len(pending), budget=budget)
            if run.failure is not None:
                raise run.failure
            frame = journal.lookup(spec.keys, spec.recipients)
            frame["state"] = frame["state"].fillna("not_sent")  # no intent recorded: the run stopped before its batch
            result = _typed_result(frame, index)
    finally:
        if owned:
            journal.close()
    in_file = journal.path != ":memory:"
    if run.tripped:
        again = ("Nothing of them was sent: run again with the same ledger to continue once the service is healthy."
                 if in_file else "Nothing of them was sent: send the rows whose outcome is not_sent again once the "
                 "service is healthy (pass ledger=<file> to make a campaign resumable).")
        warnings.warn(f"The service failed {run.unknown_streak} batches in a row with an unknown outcome (last: "
                      f"{run.last_unknown}), so the campaign stopped: {run.not_attempted} row(s) were not attempted "
                      f"(outcome not_sent). {again}", CampaignStoppedWarning, stacklevel=user_stacklevel())
    unknown = int((result["outcome"] == "unknown").sum())
    if unknown:
        where = f"Ledger({journal.path!r}).unknown_rows()" if in_file else "the result's outcome column"
        overdue = ""
        # notifications were given: a row none names after the grace is likely unsent
        if settle is not None and in_file:
            with Ledger(journal.path) as reader:
                since = pd.Timestamp.now(tz="UTC") - reader.unknown_rows()["intent_at"]
            late = int((since > GRACE).sum())
            overdue = (f" The notifications given name none of them; {late} were sent over "
                       f"{int(GRACE.total_seconds() // 60)} minutes ago (probably never reached the service), "
                       f"{unknown - late} more recently (wait for their notifications and run again).")
        warnings.warn(f"{unknown} row(s) have an unknown outcome: they may or may not have been sent.{overdue} "
                      f"See {where}; check them in the service before sending again with resend_unknown=True "
                      "(that may send twice).", SendframeWarning, stacklevel=user_stacklevel())
    release_unused_memory()
    return result


def _tagged(spec: CampaignSpec) -> CampaignSpec:
    """An sms spec with one notificationUrl per row, each carrying the row's tag (other specs as they are)."""
    url = spec.fields.get("notificationUrl")
    if spec.channel != "sms" or not isinstance(url, str):
        return spec
    fields = {k: v for k, v in spec.fields.items() if k != "notificationUrl"}
    return dataclasses.replace(spec, fields=fields, tagged_url=tag_url(url))


def _pending(journal: Ledger, spec: CampaignSpec, resend_unknown: bool) -> tuple[CampaignSpec, np.ndarray, np.ndarray]:
    """(``spec`` with the key each row is recorded under, positions of the rows to send, positions already spent on).

    Rows to send: those the ledger has no answer for (nor an unknown outcome, unless re-sending those).
    A row the ledger knows under another label (the table was exported again) keeps the ledger's key."""
    skip = ["accepted", "rejected"] + ([] if resend_unknown else ["unknown"])
    known = journal.lookup(spec.keys, spec.recipients)
    done = known["state"].isin(skip).to_numpy(dtype=bool, na_value=False)
    spent = known["state"].isin(["accepted", "unknown"]).to_numpy(dtype=bool, na_value=False)
    keys = pa.array(known["row_key"].array).cast(pa.string())
    return dataclasses.replace(spec, keys=keys), np.flatnonzero(~done), np.flatnonzero(spent)


def _send_with_progress(spec: CampaignSpec, batches: list[Batch], config: WireConfig, journal: Ledger,
                        options: SendOptions, *, total: int, budget: Budget | None) -> _Run:
    from tqdm.auto import tqdm  # noqa: PLC0415  tqdm.auto looks for IPython/ipywidgets: kept off `import sendframe`

    if not batches:
        return _Run()

    stop = options.cancel if options.cancel is not None else threading.Event()
    progress = options.progress
    if not isinstance(progress, bool):  # the caller's tqdm-compatible object (the Composer's bar)
        progress.reset(total=total)
    with (tqdm(total=total, unit="msg", desc=f"send {spec.channel}", disable=not progress)
          if isinstance(progress, bool) else contextlib.nullcontext(progress)) as bar, \
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sendframe-send") as pool:
        # its own event loop in a worker thread: the same from a script and inside Jupyter's running loop
        future = pool.submit(lambda: asyncio.run(_send_batches(spec, batches, config, journal, options, progress=bar,
                                                               stop=stop, budget=budget)))
        try:
            return future.result()
        except KeyboardInterrupt:
            stop.set()  # no new batch starts; batches in flight finish and are recorded
            future.result()
            raise
