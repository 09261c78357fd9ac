"""Waiting until given messages have their final delivery notification.

``Receiver.wait_for`` polls its log (each poll parses only the lines appended since the last,
see ``tailing``) and counts the messages whose notifications include a final one, by the one
rule of ``sendframe.api.notifications.is_final_notification``.

    >>> sent = pd.DataFrame({"id": ["a1", None, "a1", "b2"],
    ...                      "outcome": ["accepted", "rejected", "accepted", "unknown"]})
    >>> message_ids(sent)
    ['a1']
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable

import pandas as pd
from tqdm.auto import tqdm

from sendframe.api.notifications import is_final_notification
from sendframe.api.wire import user_stacklevel
from sendframe.delivery.tailing import Snapshot
from sendframe.errors import InputError, SendframeWarning

FIRST_POLL = 0.2   # seconds between polls at first; a poll that takes long spaces the next ones
LONGEST_POLL = 5.0
EXAMPLES = 3


def message_ids(ids: pd.DataFrame | pd.Series | Iterable[object] | str) -> list[str]:
    """The distinct message ids to wait for, in order: a send result frame (its accepted rows' ``id``),
    a Series or any iterable of ids; missing ids are left out."""
    if isinstance(ids, pd.DataFrame):
        if "id" not in ids:
            raise InputError(f"The frame has no 'id' column (columns: {', '.join(map(str, ids.columns))}); pass the "
                             "frame send_sms (or another send_*) returned, or its 'id' column.")
        values = ids["id"]
        if "outcome" in ids:
            values = values[ids["outcome"].astype("string").eq("accepted").fillna(False).to_numpy(bool)]
    elif isinstance(ids, str):
        values = pd.Series([ids])
    else:
        values = pd.Series(list(ids), dtype=object)
    text = pd.Series(values.to_numpy(), dtype=object).dropna()
    return [str(value) for value in pd.unique(text)]


def wait_for_final(
    read: Callable[[], Snapshot],
    ids: pd.DataFrame | pd.Series | Iterable[object] | str,
    *,
    timeout: float,
    progress: bool,
    running: Callable[[], bool],
) -> pd.DataFrame:
    """Poll ``read`` until every id has a final notification or ``timeout`` seconds have passed;
    the last frame read. A progress bar counts the messages done when ``progress``."""
    if not timeout >= 0:
        raise InputError(f"timeout must be a number of seconds, 0 or more, not {timeout!r}.")
    wanted = message_ids(ids)
    pending = set(wanted)
    deadline = time.monotonic() + timeout
    generation, checked = -1, 0
    pause = FIRST_POLL
    with tqdm(total=len(wanted), disable=not progress, unit="msg", desc="final notifications") as bar:
        while True:
            began = time.monotonic()
            snapshot = read()
            if snapshot.generation != generation:  # read again from the start (a rotated log): check every row
                generation, checked = snapshot.generation, 0
            new = snapshot.frame.iloc[checked:]
            if len(new) and pending:
                final = is_final_notification(new["status"], new.get("delivery"))
                done = pending.intersection(new.loc[final.to_numpy(bool), "id"].dropna().unique().tolist())
                pending -= done
                bar.update(len(done))
            checked = snapshot.stable_rows  # rows after these (an unfinished last line) are read again
            now = time.monotonic()
            if not pending:
                return snapshot.frame
            if now >= deadline or not running():
                _warn_pending(pending, wanted, timeout, running())
                return snapshot.frame
            pause = min(LONGEST_POLL, max(FIRST_POLL, 10 * (now - began)))
            time.sleep(min(pause, deadline - now))


def _warn_pending(pending: set[str], wanted: list[str], timeout: float, running: bool) -> None:
    left = [message_id for message_id in wanted if message_id in pending]
    examples = ", ".join(map(repr, left[:EXAMPLES])) + (", ..." if len(left) > EXAMPLES else "")
    why = f"after {timeout:g} s" if running else "and the receiver is not running, so none will arrive"
    warnings.warn(f"{len(left):,} of {len(wanted):,} message(s) still have no final notification {why} "
                  f"({examples}); the frame holds what has arrived. Wait again to get the rest.",
                  SendframeWarning, stacklevel=user_stacklevel())
