"""The ledger lock (ledger.hold): one run at a time, and a clear error when the lock file cannot be made."""

from __future__ import annotations

import os
import threading

import pytest

from sendframe.campaign.ledger import hold
from sendframe.errors import LedgerInUseError


def test_a_second_holder_in_another_thread_fails_at_once_naming_the_ledger_and_this_process(tmp_path):
    ledger = str(tmp_path / "c.sqlite")
    failures: list[BaseException] = []

    def second() -> None:
        try:
            with hold(ledger):
                pass
        except LedgerInUseError as exc:
            failures.append(exc)

    with hold(ledger):
        thread = threading.Thread(target=second)
        thread.start()
        thread.join(10)
    assert len(failures) == 1
    assert f"The ledger {ledger} is in use by another run (process {os.getpid()})" in str(failures[0])
    with hold(ledger):  # released when the block ended
        pass


def test_a_lock_file_that_cannot_be_created_is_an_oserror_naming_it(tmp_path):
    ledger = str(tmp_path / "c.sqlite")
    os.mkdir(ledger + ".lock")  # a folder where the lock file should be: opening it fails like a read-only folder
    expected = f"The lock file {ledger}.lock of the ledger {ledger} cannot be created"
    with pytest.raises(OSError, match=expected), hold(ledger):
        pass


def test_a_ledger_in_a_folder_that_does_not_exist_is_an_error_not_a_new_folder(tmp_path):
    ledger = str(tmp_path / "missing" / "c.sqlite")
    with pytest.raises(FileNotFoundError, match="missing/c.sqlite.lock"), hold(ledger):
        pass
    assert not (tmp_path / "missing").exists()
