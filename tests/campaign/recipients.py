"""What the send tests share: fresh phone numbers for each test file, and how often the sandbox got each one."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import pandas as pd


def phone_maker(prefix: str) -> Callable[[int], list[str]]:
    """A function giving ``n`` numbers ``<prefix><5 digits>`` never given before: each test file takes its own
    prefix, so files sending to one sandbox never count each other's messages."""
    counter = itertools.count()
    return lambda n: [f"{prefix}{next(counter):05d}" for _ in range(n)]


def sent_per_recipient(sb, recipients: Iterable[str]) -> pd.Series:
    """How many messages the sandbox holds for each of ``recipients`` (those it holds none for left out)."""
    messages = sb.messages()
    return messages[messages["recipient"].isin(list(recipients))]["recipient"].value_counts()
