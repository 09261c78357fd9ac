"""Receiver.wait_for: until the given messages have their final notification, through the real sandbox."""

from __future__ import annotations

import time
import warnings

import pandas as pd
import pytest

from sendframe.api.client import Client
from sendframe.api.notifications import is_final_notification
from sendframe.campaign.shortcuts import send_sms
from sendframe.delivery.receiver import Receiver
from sendframe.errors import InputError, RowsSkippedWarning, SendframeWarning, UnknownOptionError
from sendframe.sandbox import Sandbox

# magic numbers (docs/sandbox.md): delivered fast, undelivered, rejected by the operator, never final
FINAL_SOON = ["447700900001", "447700900002", "447700900003", "447700900101", "447700900201"]
NEVER = "447700900301"


@pytest.fixture(scope="module")
def sent(tmp_path_factory):
    log = tmp_path_factory.mktemp("wait") / "callbacks.log"
    with Sandbox() as sandbox, Receiver(log) as receiver:
        client = Client(sandbox.base_url, sandbox.username, sandbox.api_password)
        contacts = pd.DataFrame({"phone": FINAL_SOON + [NEVER, "12"]})  # the last one is never sent
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RowsSkippedWarning)
            results = send_sms(contacts, "Hello", "Shop", client=client, notification_url=receiver.notification_url,
                               progress=False)
        yield receiver, results


def finals(callbacks: pd.DataFrame) -> set[str]:
    return set(callbacks.loc[is_final_notification(callbacks["status"], callbacks["delivery"]).to_numpy(bool), "id"])


def test_waiting_for_a_send_result_returns_once_each_accepted_message_is_final(sent):
    receiver, results = sent
    soon = results.loc[results["outcome"].eq("accepted") & ~results.index.isin([5])]
    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SendframeWarning)
        callbacks = receiver.wait_for(soon, timeout=30, progress=False)
    assert time.monotonic() - started < 30
    assert set(soon["id"]) <= finals(callbacks)


def test_ids_may_be_a_series_or_a_list_and_the_frame_is_every_callback_so_far(sent):
    receiver, results = sent
    ids = results["id"].iloc[:3]
    by_series = receiver.wait_for(ids, timeout=30, progress=False)
    by_list = receiver.wait_for(list(ids), timeout=30, progress=True)
    assert set(ids) <= finals(by_series) and len(by_list) >= len(by_series)
    assert set(by_list["id"]) >= set(results["id"].dropna().iloc[:3])


def test_a_message_that_never_becomes_final_gives_the_frame_and_a_warning_naming_how_many(sent):
    receiver, results = sent
    receiver.wait_for(results.drop(index=5), timeout=30, progress=False)  # the others final first, whatever ran before
    started = time.monotonic()
    with pytest.warns(SendframeWarning, match=r"1 of 6 message\(s\) still have no final notification after 1\.5 s"):
        callbacks = receiver.wait_for(results, timeout=1.5, progress=False)  # the skipped row has no id: not waited for
    assert 1.4 < time.monotonic() - started < 10
    never = results.loc[5, "id"]
    assert never in set(callbacks["id"]) and never not in finals(callbacks)


def test_unknown_options_and_frames_without_ids_are_refused(sent):
    receiver, _ = sent
    with pytest.raises(UnknownOptionError, match="Did you mean 'timeout'"):
        receiver.wait_for(["a"], timout=3)
    with pytest.raises(InputError, match="no 'id' column"):
        receiver.wait_for(pd.DataFrame({"phone": ["1"]}), timeout=1)


def test_a_stopped_receiver_says_at_once_that_nothing_more_will_arrive(tmp_path):
    receiver = Receiver(tmp_path / "cb.log").start()
    receiver.stop()
    started = time.monotonic()
    with pytest.warns(SendframeWarning, match="receiver is not running"):
        frame = receiver.wait_for(["x1", "x2"], timeout=60, progress=False)
    assert time.monotonic() - started < 5 and frame.empty
