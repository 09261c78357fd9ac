"""Send a prepared frame: batches, bounded concurrency, rate limits, progress, a ledger.

:meth:`sendframe.Message.send` prepares the contacts (:mod:`sendframe.campaign.prepared`: each row's action,
text, encoding, parts, cost and send time, worked out once) and :func:`send_prepared` sends the rows it lets
through: nothing is rendered, measured or checked again (the wire models still validate each request).

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
- ``dry_run``: ``dry_run=True``, nothing sent;
- ``skipped_*``: the policy left the row out (:mod:`sendframe.campaign.policy`).

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
import inspect
import os
import threading
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from sendframe.api.client import AsyncClient, Client
from sendframe.api.validation import format_wire_datetime
from sendframe.api.wire import WireConfig, user_stacklevel
from sendframe.campaign.batching import Batch, CampaignSpec, TokenBucket, campaign_identity, plan_batches
from sendframe.campaign.ledger import SPENT_STATES, Ledger
from sendframe.campaign.ledger_rows import GRACE, ROW_DTYPES, tags_from_callbacks
from sendframe.campaign.policy import warn_skipped
from sendframe.campaign.prepared import Prepared
from sendframe.campaign.preview import forget
from sendframe.errors import (
    ApiError,
    AuthenticationError,
    CampaignStoppedWarning,
    InputError,
    NotSentError,
    RowsSkippedWarning,
    SendframeWarning,
    UnknownOutcomeError,
)
from sendframe.memory import release_unused_memory
from sendframe.options import check_options
from sendframe.send_outcomes import OUTCOMES

__all__ = ["ANSWER_COLUMNS", "SEND_OPTIONS", "Budget", "SendOptions", "send_prepared", "send_signature"]

ANSWER_COLUMNS = ("accepted", "id", "parts", "scheduled_at", "expires_at", "error_code", "error_description",
                  "campaign_id", "sending_id", "batch", "outcome")
F = TypeVar("F", bound=Callable[..., Any])
MAX_BATCH = 1000  # docs/api-notes.md: at most 1,000 recipients per request


@dataclasses.dataclass(frozen=True)
class SendOptions:
    """How to send, as one checked value: the options of :meth:`sendframe.Message.send` besides the contacts,
    their defaults written once (the message's own settings are not repeated here). Each one (this list is the
    CLI's help too):

    - ``client``: the API client, a sendframe ``Client`` or ``AsyncClient`` (default: one from the environment)
    - ``ledger``: SQLite journal (a file, or a ``Ledger``) that makes the send resumable: rows already answered are
      not sent again
    - ``suppression``: recipients never sent to, for this run (replaces the message's list)
    - ``keep``: send rows the policy leaves out anyway: invalid (missing or invalid recipient), suppressed (on the
      suppression list), preflight (another preflight error of the row), duplicate (the recipient repeats an
      earlier row), frequency (over the frequency cap); by default they are skipped with outcome skipped_<reason>
    - ``batch_size``: recipients per request (at most 1000)
    - ``concurrency``: requests in flight at once
    - ``requests_per_second``: most requests started per second
    - ``parts_per_second``: most SMS parts sent per second
    - ``dry_run``: build and validate every request, send nothing
    - ``resend_unknown``: also send rows whose earlier outcome is unknown (they may have been sent already)
    - ``stop_after_unknown``: start no new batch after N batches in a row end with an unknown outcome (None: never)
    - ``progress``: show a progress bar (True/False for a tqdm bar), or a tqdm-compatible object to update
      (reset(total=), update(n))
    - ``max_cost``: cap on the estimated spend of the whole campaign, counting what the ledger already sent
    - ``prices``: price table (CSV; default: the one shipped with sendframe)
    - ``callbacks``: the campaign's callback log: unknown rows whose notification came back are marked accepted
    - ``now``: when the run counts from (tz-aware; default: now)
    - ``out``: a folder: send one partition at a time, the result written to it as Parquet
    - ``cancel``: a threading.Event that, once set, starts no new batch

        >>> SendOptions.of({"dry_run": True}, "Message.send").concurrency
        4
        >>> SendOptions.of({"dryrun": True}, "Message.send")
        Traceback (most recent call last):
        ...
        sendframe.errors.UnknownOptionError: Message.send() got an unknown option 'dryrun'. Did you mean 'dry_run'?
    """

    client: Any = None
    ledger: Any = None
    suppression: Any = None
    keep: str | Iterable[str] | None = None
    batch_size: int = 500
    concurrency: int = 4
    requests_per_second: float | None = None
    parts_per_second: float | None = None
    dry_run: bool = False
    resend_unknown: bool = False
    stop_after_unknown: int | None = 3
    progress: Any = True
    max_cost: float | None = None
    prices: Any = None
    callbacks: Any = None
    now: Any = None
    out: str | os.PathLike[str] | None = None
    cancel: threading.Event | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= MAX_BATCH:
            raise InputError(f"batch_size must be between 1 and {MAX_BATCH} (the service's limit), "
                             f"got {self.batch_size}.")
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {self.concurrency}.")
        cap = self.max_cost
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float)) or cap < 0):
            raise InputError(f"max_cost must be a number of at least 0 (in the price table's currency), got {cap!r}.")
        stop = self.stop_after_unknown
        if stop is not None and (isinstance(stop, bool) or stop < 0):
            raise InputError(f"stop_after_unknown must be a whole number of batches (0 or None: never stop), "
                             f"got {stop!r}.")

    @classmethod
    def of(cls, options: Mapping[str, Any], where: str, *, also: Iterable[str] = ()) -> SendOptions:
        """The options given by keyword, checked: an unknown name is an error with a "did you mean"
        (``also``: other names the caller accepts, offered as suggestions)."""
        check_options(options, [*SEND_OPTIONS, *also], where)
        return cls(**options)


SEND_OPTIONS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SendOptions))


def send_signature(function: F) -> F:
    """Give ``function(self, contacts, **options)`` the signature and type hints of its options, for help(),
    editors and the front doors that read them (:mod:`sendframe.campaign.channel_options`)."""
    hints = typing.get_type_hints(SendOptions)
    given = list(inspect.signature(function).parameters.values())
    keywords = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=getattr(SendOptions(), name),
                                  annotation=hints[name]) for name in SEND_OPTIONS]
    function.__signature__ = inspect.Signature([*given[:2], *keywords, *given[2:]])  # type: ignore[attr-defined]
    function.__annotations__ = {**function.__annotations__, **{name: hints[name] for name in SEND_OPTIONS}}
    return function


@dataclasses.dataclass
class Budget:
    """The budget cap of a send: no batch starts that would take the estimated spend above ``max_cost``.

    The spend counted is the estimated cost (:meth:`sendframe.Message.estimate`) of the rows the ledger
    already holds as accepted or unknown (an unknown row may have been sent: it is counted, to stay
    under the cap), plus every batch started in this run. Which batches start is decided before the first
    does (:meth:`fit`): in order, until one does not fit, so a run with a higher cap continues with the same rows.

        >>> budget = Budget(10.0, [3.0, 3.0, 3.0, 3.0])
        >>> budget.fit([range(0, 2), range(2, 4)]), budget.spent, budget.left_out
        (1, 6.0, [2, 3])
    """

    cap: float
    row_costs: npt.ArrayLike
    spent: float = 0.0
    reached: bool = False
    left_out: list[int] = dataclasses.field(default_factory=list)
    counted_ahead: bool = False
    """Whether ``spent`` already holds every earlier run's spend on the whole campaign (a partitioned send counts
    it before the first batch of its first partition): a run adds none, and once a batch did not fit, none of a
    later run starts."""

    def start(self, row_costs: npt.ArrayLike) -> None:
        """Begin a run over rows with these estimated costs (the spend so far is kept)."""
        self.row_costs = np.asarray(row_costs, dtype=np.float64)
        self.left_out = []
        self.reached = self.reached and self.counted_ahead

    def _cost(self, positions: Iterable[int]) -> float:
        return float(np.asarray(self.row_costs)[np.fromiter(positions, np.int64)].sum())

    def count(self, positions: Iterable[int]) -> None:
        """Add rows already spent on (by an earlier run), unless :attr:`counted_ahead`."""
        if not self.counted_ahead:
            self.spent += self._cost(positions)

    def fit(self, batches: Sequence[Iterable[int]]) -> int:
        """How many of ``batches`` (each its rows' positions, in order) start, decided before the first does:
        those before the first that would take the spend above the cap, their cost counted as spent; the rows
        of the rest are :attr:`left_out`."""
        spent = np.cumsum([self.spent, *map(self._cost, batches)])[1:]
        fitting = 0 if self.reached else int(np.searchsorted(spent > self.cap + 1e-9, True))
        if fitting:
            self.spent = float(spent[fitting - 1])
        if fitting < len(batches):
            self.reached = True
            self.left_out.extend(int(row) for rows in batches[fitting:] for row in rows)
        return fitting

    def reason(self, currency: str = "") -> str:
        """Why a row was left out, for the result's ``reason`` column."""
        unit = f" {currency}" if currency else ""
        return (f"not sent: the next batch would take the estimated spend above max_cost={self.cap:g}{unit} "
                f"(spent {self.spent:.4f}{unit}); run again with a higher max_cost to continue.")


def send_prepared(prepared: Prepared, options: SendOptions, *, budget: Budget | None = None,
                  identity: Mapping[str, Any] | None = None, warn: bool = True) -> pd.DataFrame:
    """Send the rows ``prepared`` plans to send; one result row per contact (see :meth:`sendframe.Message.send`).

    ``warn``: say once which rows are skipped (a campaign of several messages says it for all of them);
    ``budget`` (default: one from ``options.max_cost``: no batch starts that would take the estimated spend
    above it) and ``identity`` (what the ledger checks before resuming; default: the channel, template, sender)
    are shared by such a campaign.

        >>> import pandas as pd, sendframe
        >>> from sendframe.campaign.prepared import prepare
        >>> msg = sendframe.sms("Hi {name}", sender="Shop")
        >>> frame = pd.DataFrame({"phone": ["34600123456", "x"], "name": ["Jo", "Al"]})
        >>> result = send_prepared(prepare(msg, frame), SendOptions(dry_run=True, progress=False), warn=False)
        >>> result["outcome"].tolist()
        ['dry_run', 'skipped_invalid']
    """
    table, sending = prepared.frame, prepared.sent
    if warn:
        warn_skipped(table, options.dry_run)
    if budget is None and options.max_cost is not None:
        budget = Budget(options.max_cost, [])
    spec, parts = _spec(prepared)
    if budget is not None:
        budget.start(table.loc[sending, "cost"].to_numpy(dtype="float64", na_value=0.0))
    if options.dry_run:
        number = np.zeros(len(parts), np.int64)
        for batch in plan_batches(spec, range(len(parts)), batch_size=options.batch_size, parts=parts):
            batch.encoded  # noqa: B018  each request validated, as a send would before its POST
            number[batch.positions] = batch.number
        answers = pd.DataFrame({"batch": number, "parts": parts, "state": "dry_run"})
    else:
        # a send that sends is the last use of what was prepared and measured: the session keeps its result, not
        # a second per-row table (about 150 bytes a row)
        forget()
        answers = _sent(spec, options, parts, budget, identity,
                        tags_from_callbacks(options.callbacks, prepared.message.notification_url))
    reason = pd.Series(pd.NA, index=answers.index, dtype="str")
    if budget is not None and budget.left_out:
        currency = table.attrs.get("currency", "")
        reason.iloc[budget.left_out] = budget.reason(currency)
        warnings.warn(f"{len(budget.left_out)} row(s) not sent: {budget.reason(currency)}", RowsSkippedWarning,
                      stacklevel=user_stacklevel())
    return _result(table, answers.assign(reason=reason), sending)


def _spec(prepared: Prepared) -> tuple[CampaignSpec, np.ndarray]:
    """The requests of the rows to send, from what the prepared frame holds of them; their parts."""
    msg, contacts, table, sending = prepared.message, prepared.contacts, prepared.frame, prepared.sent
    column = prepared.recipient_column
    if "invalid" in prepared.keep:  # sent as written: the service answers for them (102)
        fallback = contacts.get(f"{column}_raw", "")  # read_contacts keeps what was typed there
        contacts = contacts.assign(**{column: contacts[column].fillna(fallback).fillna("")})
    row_fields: dict[str, Sequence[Any]] = {}
    if msg.encoding == "auto" and msg.info.sends_sms:
        row_fields["encoding"] = table.loc[sending, "encoding"].fillna("gsm").tolist()
    if "send_at_utc" in table:
        moment = pd.Timestamp(prepared.moment)
        row_fields["scheduleDate"] = [format_wire_datetime(t.to_pydatetime()) if t > moment else None
                                      for t in table.loc[sending, "send_at_utc"]]
    spec = CampaignSpec.build(contacts, msg, to=column, row_fields=row_fields, rows=sending)
    return spec, table.loc[sending, "parts"].fillna(1).to_numpy(dtype="int64")  # a row without text: 1


def _result(table: pd.DataFrame, answers: pd.DataFrame, sending: np.ndarray) -> pd.DataFrame:
    """The answers of the rows sent (``answers``, by ledger state, one per row of the mask ``sending``, in order)
    beside the plan's outcome of the rows skipped, on the contacts' index, with the columns of
    :data:`ANSWER_COLUMNS`."""
    at = np.full(len(table), -1)
    at[sending] = np.arange(len(answers))  # by position: no label looked up
    kept = [name for name in (*ANSWER_COLUMNS, "reason") if name in answers]
    skipped = ~sending
    # as codes: through texts, a Python string per row (about 130 MiB at the peak of a million); a state and its
    # outcome share a name; get_indexer: -1 for a value that is no outcome ("send"), where a Categorical would warn
    categories = pd.Index(OUTCOMES)
    state = np.full(len(table), -1, dtype=np.int8)
    state[sending] = pd.Categorical(answers["state"], categories=categories).codes
    outcome = np.where(skipped, categories.get_indexer(pd.Index(table["action"])), state).astype(np.int8)
    answers = answers[kept].set_axis(pd.RangeIndex(len(answers))).reindex(at).set_axis(table.index)
    columns = {name: answers[name].astype(ROW_DTYPES[name]) if name in answers else
               pd.Series(pd.NA, index=table.index, dtype=ROW_DTYPES[name]) for name in ANSWER_COLUMNS[:-1]}
    not_accepted = np.isin(state, [OUTCOMES.index("rejected"), OUTCOMES.index("not_sent")]) | skipped
    columns["accepted"] = columns["accepted"].mask(not_accepted, False)
    for name in ("scheduled_at", "expires_at"):
        if columns[name].isna().all():  # the usual answer: sent now, no expiry
            columns[name] = pd.Series(pd.NaT, index=table.index, dtype="datetime64[us, UTC]")
        else:
            columns[name] = pd.to_datetime(columns[name], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
    return pd.DataFrame({"recipient": table["recipient"], "text": table["text"], **columns,
                         "outcome": pd.Categorical.from_codes(outcome, categories=categories),
                         "reason": table["reason"].where(skipped, answers["reason"])}, index=table.index)


def _sent(spec: CampaignSpec, options: SendOptions, parts: np.ndarray, budget: Budget | None,
          identity: Mapping[str, Any] | None, settle: Mapping[str, str]) -> pd.DataFrame:
    """Send every row of ``spec`` through the ledger; what the ledger holds of each row (state ``not_sent`` for
    a row with no intent: the run stopped before its batch).

    A ledger that already holds batches first has ``settle`` (tag -> message id, from notifications) mark rows of
    its unknown batches accepted (:meth:`Ledger.settle`); then the rows it holds an answer for (or, unless
    ``resend_unknown``, an unknown outcome) are not sent again, and a row it knows under another label (the table
    was exported again) keeps the ledger's key.
    """
    client = options.client
    if client is not None and not isinstance(client, (Client, AsyncClient)):
        raise InputError(f"client must be a sendframe Client or AsyncClient, not {type(client).__name__}.")
    config = WireConfig.resolve() if client is None else client.config
    owned = not isinstance(options.ledger, Ledger)  # a ledger of its own is closed at the end; the caller's is not
    journal = Ledger(":memory:" if options.ledger is None else options.ledger) if owned else options.ledger
    with journal if owned else contextlib.nullcontext(), journal.exclusive():
        journal.bind(identity if identity is not None else campaign_identity(spec.channel, spec.fields))
        first_batch = journal.next_batch()
        pending: Sequence[int] | np.ndarray = range(len(spec.keys))
        if first_batch > 1:
            journal.settle(settle)
            known = journal.lookup(spec.keys, spec.recipients)
            spec = dataclasses.replace(spec, keys=pa.array(known["row_key"].array).cast(pa.string()))
            state = known["state"]
            answered = ["accepted", "rejected"] + ([] if options.resend_unknown else ["unknown"])
            pending = np.flatnonzero(~state.isin(answered).to_numpy(dtype=bool, na_value=False))
            if budget is not None:
                budget.count(np.flatnonzero(state.isin(SPENT_STATES).to_numpy(dtype=bool, na_value=False)))
        batches = plan_batches(spec, pending, batch_size=options.batch_size, first_batch=first_batch, parts=parts)
        if budget is not None:
            batches = batches[:budget.fit([batch.positions for batch in batches])]
        run = _send_batches(spec, batches, config, journal, options)
        if run.failure is not None:
            raise run.failure
        frame = journal.lookup(spec.keys, spec.recipients)
        frame["state"] = frame["state"].fillna("not_sent")
        unknown = int((frame["state"] == "unknown").sum())
        # sent longer ago than the grace period and named by no notification: it probably never reached the service
        late = int((pd.Timestamp.now(tz="UTC") - journal.unknown_rows()["intent_at"] > GRACE).sum()) if unknown else 0
    in_file = journal.path != ":memory:"
    if run.tripped:
        again = ("Nothing of them was sent: run again with the same ledger to continue once the service is healthy."
                 if in_file else "Nothing of them was sent: send the rows whose outcome is not_sent again once the "
                 "service is healthy (pass ledger=<file> to make a campaign resumable).")
        warnings.warn(f"The service failed {run.unknown_streak} batches in a row with an unknown outcome (last: "
                      f"{run.last_unknown}), so the campaign stopped: {run.not_attempted} row(s) were not attempted "
                      f"(outcome not_sent). {again}", CampaignStoppedWarning, stacklevel=user_stacklevel())
    if unknown:
        where = f"Ledger({journal.path!r}).unknown_rows()" if in_file else "the result's outcome column"
        overdue = ""
        if in_file:
            # without callbacks= no notification was looked at: the advice is to pass them, not that they named none
            given = options.callbacks is not None
            named = " The notifications given name none of them;" if given else " Of them,"
            settle_with = "" if given else " with callbacks= (the Receiver or its log), which settles the accepted ones"
            overdue = (f"{named} {late} were sent over {int(GRACE.total_seconds() // 60)} minutes ago (probably never "
                       f"reached the service), {unknown - late} more recently (wait for their notifications and run "
                       f"again{settle_with}).")
        warnings.warn(f"{unknown} row(s) have an unknown outcome: they may or may not have been sent.{overdue} "
                      f"See {where}; check them in the service before sending again with resend_unknown=True "
                      "(that may send twice).", SendframeWarning, stacklevel=user_stacklevel())
    release_unused_memory()
    return frame


@dataclasses.dataclass
class _Run:
    """What the sending loop reports back: why it stopped early, if it did (``failure``: raised once it ends)."""

    failure: Exception | None = None
    unknown_streak: int = 0
    tripped: bool = False
    last_unknown: str = ""
    not_attempted: int = 0


def _send_batches(spec: CampaignSpec, batches: Sequence[Batch], config: WireConfig, ledger: Ledger,
                  options: SendOptions) -> _Run:
    """Send ``batches``, at most ``options.concurrency`` at once and paced, on a private event loop in a worker
    thread: the same from a script and inside Jupyter's running loop."""
    from tqdm.auto import tqdm  # noqa: PLC0415  tqdm.auto looks for IPython/ipywidgets: kept off `import sendframe`

    run = _Run()
    if not batches:
        return run
    request_bucket = TokenBucket(options.requests_per_second) if options.requests_per_second else None
    parts_bucket = TokenBucket(options.parts_per_second) if options.parts_per_second else None
    stop = options.cancel if options.cancel is not None else threading.Event()

    def ended(unknown: bool, why: str = "") -> None:
        """Count batches ending unknown in a row (in the order they end); trip the breaker at the limit."""
        run.unknown_streak = run.unknown_streak + 1 if unknown else 0
        if unknown:
            run.last_unknown = why
        if options.stop_after_unknown and run.unknown_streak >= options.stop_after_unknown and not stop.is_set():
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
            # 400: rejected as a whole; 401/403 (no point sending the rest), 413, a lasting 429: nothing processed
            rejected = exc.status == 400 and not isinstance(exc, (AuthenticationError, NotSentError))
            state = "unknown" if isinstance(exc, UnknownOutcomeError) else "done" if rejected else "not_sent"
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

    async def send_one(client: AsyncClient, batch: Batch, semaphore: asyncio.Semaphore) -> None:
        async with semaphore:
            if not stop.is_set():
                if request_bucket:
                    await request_bucket.acquire(1)
                if parts_bucket:
                    await parts_bucket.acquire(batch.parts)
            if stop.is_set():
                run.not_attempted += len(batch.positions)  # no intent: the next run sends these rows
                return
            try:
                await exchange(client, batch)
            # the ledger cannot record (a full disk), the batch's request breaks a rule, or anything unforeseen:
            # no new batch starts, batches in flight finish and are recorded, then the first failure is raised
            except Exception as exc:  # noqa: BLE001  raised once the loop ends
                run.failure = run.failure or exc
                stop.set()
                return
            bar.update(len(batch.positions))

    async def send_all() -> None:
        semaphore = asyncio.Semaphore(options.concurrency)
        async with AsyncClient(config=config) as client:
            await asyncio.gather(*(send_one(client, batch, semaphore) for batch in batches))

    progress, total = options.progress, sum(len(batch.positions) for batch in batches)
    if not isinstance(progress, bool):  # the caller's tqdm-compatible object (the Composer's bar)
        progress.reset(total=total)
    with (tqdm(total=total, unit="msg", desc=f"send {spec.channel}", disable=not progress)
          if isinstance(progress, bool) else contextlib.nullcontext(progress)) as bar, \
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sendframe-send") as pool:
        future = pool.submit(asyncio.run, send_all())
        try:
            future.result()
        except KeyboardInterrupt:
            stop.set()  # no new batch starts; batches in flight finish and are recorded
            future.result()
            raise
    return run
