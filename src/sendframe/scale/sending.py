"""Sending from a Dask frame: partition by partition through one ledger, the result to Parquet as it goes.

:func:`send_partitions` (``Message.send(frame, ..., out=...)``) prepares every partition once on the
cluster, rows labelled by their position in the whole frame, and in the same pass finds the rows
repeating a recipient an earlier row sends to and each row's estimated cost (what ``max_cost``
counts, with the ledger's earlier spend, before the first batch). The prepared partitions wait on
the workers of a distributed cluster, or on this machine's disk. Then one partition at a time is
sent with :func:`~sendframe.campaign.send.send_prepared` (nothing rendered or measured
again) through one ledger held for the whole run, and its result written as one file of ``out``.
Memory is one partition. Rows are keyed in the ledger by position, so a run killed at any moment
and run again with the same ledger resumes exactly like a pandas send.

    >>> result = msg.send(contacts_ddf, ledger="spring.sqlite", out="spring-results.parquet")  # doctest: +SKIP
    >>> result["outcome"].value_counts().compute()  # doctest: +SKIP
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import inspect
import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cloudpickle  # type: ignore[import-untyped]
import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from sendframe.api.wire import user_stacklevel
from sendframe.campaign.ledger import SPENT_STATES, Ledger, hold
from sendframe.campaign.ledger_rows import tags_from_callbacks
from sendframe.campaign.message_options import RUN_SETTINGS
from sendframe.campaign.policy import keep_reasons, warn_skipped
from sendframe.campaign.prepared import Prepared
from sendframe.campaign.send import Budget, SendOptions, send_prepared
from sendframe.errors import CampaignStoppedWarning, InputError, naming_full_disk
from sendframe.scale.messages import sent_repeats, skip_elsewhere, with_duplicates
from sendframe.scale.partitions import delayed_call, from_pandas, pandas_strings, row_offsets
from sendframe.send_outcomes import OUTCOMES

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["PartitionLedger", "send_partitions"]


class PartitionLedger(Ledger):
    """A ledger a partitioned send holds for its whole run, answering lookups for one partition at a time.

    Its rows are keyed by position in the whole frame, so a row recorded for another partition is
    never the match of this partition's row (the ledger's match by recipient and rank is kept
    within the partition). A lookup reads only the batches holding keys of the partition's range
    (``scope``): the span of keys of every batch is read once when the ledger is opened and kept
    up to date as batches are recorded, so a send of P partitions reads each ledger row a bounded
    number of times, not P times. The run holds the ledger's lock from start to end; the
    per-partition sends inside it take nothing more.

        >>> ledger = PartitionLedger(":memory:")
        >>> ledger.scope = range(0, 10)
        >>> ledger.record_intent(1, "f1", [("3", "447700900001")])
        >>> ledger.lookup(["3"], ["447700900001"])["state"].tolist()
        ['unknown']
        >>> ledger.scope = range(10, 20)
        >>> ledger.lookup(["10"], ["447700900001"])["state"].tolist()
        [<NA>]
    """

    scope: range = range(0)

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        super().__init__(path)
        # the span of keys of each batch of earlier runs, read once
        self._spans = pd.DataFrame.from_dict(self.key_spans(), orient="index", columns=["low", "high"])
        self._recorded: dict[range, list[int]] = {}  # batches of this run, by the partition they were sent for

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        """Nothing: :func:`send_partitions` holds the ledger's lock for the whole run."""
        return contextlib.nullcontext()

    def record_intent(self, batch: int, fingerprint: str, rows: Sequence[tuple[str, str]]) -> None:
        """:meth:`Ledger.record_intent`, the batch noted as one of this partition's for the lookups that follow."""
        super().record_intent(batch, fingerprint, rows)
        self._recorded.setdefault(self.scope, []).append(batch)

    def lookup(self, keys: Sequence[str], recipients: Sequence[str], *,
               batches: Sequence[int] | None = None) -> pd.DataFrame:
        """:meth:`Ledger.lookup` among the batches of this partition's keys, with matches to rows of
        other partitions undone (those rows are not these)."""
        if batches is None:  # a partition's rows are sent with keys in its range: its batches are those
            overlap = (self._spans["low"] < self.scope.stop) & (self._spans["high"] >= self.scope.start)
            batches = [*self._spans.index[overlap].tolist(), *self._recorded.get(self.scope, [])]
        found = super().lookup(keys, recipients, batches=batches)
        matched = pd.to_numeric(found["row_key"], errors="coerce")  # a key that is no position: NaN, elsewhere
        elsewhere = ~matched.between(self.scope.start, self.scope.stop - 1).to_numpy(dtype=bool, na_value=False)
        if elsewhere.any():
            others = [c for c in found.columns if c not in ("row_key", "recipient")]
            found.loc[elsewhere, others] = pd.NA
            found.loc[elsewhere, "row_key"] = pd.array(keys, dtype="string")[elsewhere]
        return found


def _prepared(part: pd.DataFrame, start: int, msg: Message, options: dict[str, Any]) -> Prepared:
    """``msg.prepare`` of ``part`` labelled by its rows' positions in the whole frame (``row``: the ledger keys rows
    by them), every per-row column worked out where it is prepared (on the cluster): the send reads them."""
    prepared = msg.prepare(part.set_axis(pd.RangeIndex(start, start + len(part), name="row"), axis=0), **options)
    prepared.frame  # noqa: B018  a cached property: computed here, kept with the object
    return prepared


def _sent_costs(prepared: Prepared, repeats: pd.DataFrame | None) -> np.ndarray:
    """Each row's estimated cost as sent (0 for a row skipped by its partition's plan or as one of ``repeats``)."""
    return skip_elsewhere(prepared, repeats).frame["cost"].to_numpy(dtype=np.float64, na_value=0.0)


_STASH_ADVICE = ("a Dask send keeps each prepared partition in the temporary folder until it sends it; free space "
                "there, or set TMPDIR to a folder on a disk with room. Nothing was sent.")


def _stashed(prepared: Prepared, path: str) -> None:
    """``prepared`` kept on this machine's disk until the send takes its partition (with Dask's own pickler, as
    a message holds mapping proxies)."""
    with naming_full_disk(path, _STASH_ADVICE, torn=True), open(path, "wb") as file:
        cloudpickle.dump(prepared, file)


def _unstashed(path: str) -> Prepared:
    prepared: Prepared = pd.read_pickle(path)  # noqa: S301  our own file, written by this run
    os.unlink(path)
    return prepared


def _prepare_all(msg: Message, frame: Any, options: dict[str, Any], keep: list[str],
                 stash: str | None) -> tuple[list[Any], list[pd.DataFrame | None], np.ndarray, np.ndarray]:
    """Every partition prepared once, in one pass on the cluster, labelled by position in the whole frame.

    Answers the prepared partitions (persisted on the workers of a distributed cluster; else the paths of
    ``stash``'s files, this process keeping none of them in memory), per partition the rows whose recipient an
    earlier row of the frame is sent to (None when repeats are kept), each row's estimated cost as sent (a
    repeat's 0), and where each partition's rows start (:func:`~sendframe.scale.partitions.row_offsets`)."""
    parts = frame.to_delayed()
    # each partition's start: the lazy sum of the lengths of those before it
    starts = itertools.accumulate((delayed_call(len, part) for part in parts[:-1]), initial=0)
    prepared = [delayed_call(_prepared, part, start, msg, options)
                for part, start in zip(parts, starts, strict=True)]
    if stash is None:
        prepared = held = dask.persist(prepared)[0]
        stashing = []
    else:
        held = [os.path.join(stash, f"part.{n}.pickle") for n in range(len(prepared))]
        stashing = [delayed_call(_stashed, p, path) for p, path in zip(prepared, held, strict=True)]
    repeats = [None] * len(prepared) if "duplicate" in keep else sent_repeats(frame, prepared).to_delayed()
    costs = [delayed_call(_sent_costs, p, r) for p, r in zip(prepared, repeats, strict=True)]
    found, costs, _ = dask.compute(repeats, costs, stashing)
    return held, list(found), np.concatenate([np.zeros(0), *costs]), row_offsets([len(c) for c in costs])


def _earlier_spend(journal: Ledger, cost: np.ndarray) -> float:
    """The estimated cost of the rows of the frame the ledger holds as accepted or unknown (sent, or maybe
    sent), keyed by their position in the frame: what earlier runs spent on the campaign."""
    rows = journal.rows()
    spent = rows[rows["state"].isin(SPENT_STATES).to_numpy(dtype=bool, na_value=False)]
    at = pd.to_numeric(spent["row_key"], errors="coerce").dropna().to_numpy(dtype=np.int64)
    return float(cost[np.unique(at[(at >= 0) & (at < len(cost))])].sum())


def _write_part(result: pd.DataFrame, out: Path, number: int) -> None:
    """One partition's result as ``part.<n>.parquet``, in place at once (a reader never sees half a file)."""
    target = out / f"part.{number:05d}.parquet"
    temporary = out / f".part.{number:05d}.parquet.tmp"
    with naming_full_disk(target, "the partition's result was not written; free space and run again with the same "
                          "ledger (nothing is sent twice, the result is written again)."):
        result.to_parquet(temporary, index=True)  # the row positions as a column in every file, RangeIndex or not
    os.replace(temporary, target)


def send_partitions(send: Callable[..., Any], msg: Message, contacts: Any, **given: Any) -> Any:
    """Send ``msg`` to every row of a Dask (or pandas) frame, one partition at a time; the result goes to ``out``.

    ``out`` is a Parquet dataset (a folder, written again whole by every run), one file per
    partition, each written as soon as its partition is answered; the answer is that dataset, read
    lazily. ``ledger`` (a file) is required: it is what makes the run resumable. The other
    options are those of :meth:`sendframe.Message.send` (``client``, ``batch_size``, ``concurrency``, ...).
    ``cancel`` (a ``threading.Event``), once set, starts no new batch, as in a pandas send: the rows
    of the partition under way that were not attempted are ``not_sent`` in its file, and no further
    partition is read (a warning says how many rows that leaves without a result file; running
    again with the same ledger continues). A breaker trip (``stop_after_unknown``) stops alike.
    The result's index is the row's position in the whole frame (``row``); its columns are those of
    a pandas send.

        >>> done = send_partitions(Message.send, msg, frame, out="done.parquet", ledger="c.sqlite")  # doctest: +SKIP
    """
    if any(name in given for name in RUN_SETTINGS if name != "suppression"):
        # the pandas send (``send``) applies them and sends the changed message (back here, without them)
        return inspect.unwrap(send)(msg, contacts, **given)
    options = SendOptions.of(given, "Message.send", also=RUN_SETTINGS)
    if options.out is None:
        raise InputError("A send from a Dask frame writes its result to a Parquet dataset as it goes: pass "
                         "out=<folder>, e.g. msg.send(frame, ledger='spring.sqlite', out='spring-results.parquet').")
    if options.ledger is None or str(options.ledger) == ":memory:":
        raise InputError("A send from a Dask frame needs ledger=<file>: it is what lets the run be resumed "
                         "partition by partition.")
    if not isinstance(contacts, (dd.DataFrame, pd.DataFrame)):
        raise InputError(f"send_partitions takes a Dask or pandas DataFrame, not {type(contacts).__name__}.")
    if options.dry_run:
        raise InputError("dry_run is not available for a send from a Dask frame: use msg.plan(frame) to see what "
                         "would be sent.")
    frame = (contacts if isinstance(contacts, dd.DataFrame) else from_pandas(contacts)).optimize()
    keep = sorted(keep_reasons(options.keep))
    ledger_path = os.fspath(options.ledger)
    now = pd.Timestamp.now(tz="UTC") if options.now is None else options.now  # one moment for every partition
    each = {"suppression": options.suppression, "keep": with_duplicates(keep), "now": now, "ledger": ledger_path,
            "prices": options.prices}
    target = Path(options.out)
    counts: collections.Counter[str] = collections.Counter()
    budget = Budget(options.max_cost, [], counted_ahead=True) if options.max_cost is not None else None
    with contextlib.ExitStack() as stack:
        # the prepared partitions wait on the workers of a distributed cluster, else on this machine's disk
        # (a distributed.Client is the scheduler: its bound ``get``)
        scheduler = getattr(dask.base.get_scheduler(), "__self__", None)
        stash = None if type(scheduler).__module__.startswith("distributed.") else stack.enter_context(
            tempfile.TemporaryDirectory(prefix="sendframe-prepared-"))
        held, repeats, cost, offsets = _prepare_all(msg, frame, each, keep, stash)
        if target.exists():
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        target.mkdir(parents=True)
        stack.enter_context(hold(ledger_path))
        journal = stack.enter_context(contextlib.closing(PartitionLedger(ledger_path)))
        if budget is not None:  # the whole campaign's earlier spend, before the first batch (as pandas counts it)
            budget.spent = _earlier_spend(journal, cost)
        journal.settle(tags_from_callbacks(options.callbacks, msg.notification_url))  # the whole ledger, once
        how = dataclasses.replace(options, ledger=journal, keep=keep, out=None, callbacks=None)
        for number, kept in enumerate(held):
            prepared = _unstashed(kept) if stash is not None else dask.compute(kept)[0]
            journal.scope = range(int(offsets[number]), int(offsets[number + 1]))
            prepared = skip_elsewhere(prepared, repeats[number])
            # the rows skipped are said once, for the whole frame
            sent = send_prepared(prepared, how, budget=budget, warn=False)
            sent.index.name = "row"
            _write_part(sent, target, number)
            counts.update({str(outcome): int(n) for outcome, n in sent["outcome"].value_counts().items()})
            # stopped before its end: cancelled, or rows left not attempted by a breaker trip (``not_sent`` with
            # no reason; the budget's ``not_sent`` rows say why)
            cancelled = options.cancel is not None and options.cancel.is_set()
            untried = (sent["outcome"] == "not_sent").to_numpy() & sent["reason"].isna().to_numpy()
            if number + 1 < frame.npartitions and (cancelled or untried.any()):
                left, rows = frame.npartitions - number - 1, int(offsets[-1] - offsets[number + 1])
                why = "was cancelled" if cancelled else "stopped"
                warnings.warn(f"The send {why} after partition {number + 1} of {frame.npartitions}: the "
                              f"{rows} row(s) of the {left} partition(s) after it were not sent and have no result "
                              "file. Run again with the same ledger to continue.", CampaignStoppedWarning,
                              stacklevel=user_stacklevel())
                break
    # the rows skipped, said once for the whole frame (each row's outcome a category: a byte a row)
    warn_skipped(pd.DataFrame({"action": pd.Series(list(counts), dtype="category").repeat(list(counts.values()))}))
    # read back as pandas reads its own files: text as str (not string[pyarrow]), and the outcome's
    # categories known (a Parquet read leaves them unknown until computed)
    with pandas_strings():
        written = dd.read_parquet(target, index="row")
    return written.astype({"outcome": pd.CategoricalDtype(pd.Index(OUTCOMES))})  # as send_prepared types it
