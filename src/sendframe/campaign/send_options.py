"""How to send, as one checked value: the options of :meth:`sendframe.Message.send`, their defaults written once.

    >>> options = SendOptions.of({"dry_run": True, "batch_size": 100}, "Message.send")
    >>> options.dry_run, options.concurrency
    (True, 4)
    >>> SendOptions.of({"dryrun": True}, "Message.send")
    Traceback (most recent call last):
    ...
    sendframe.errors.UnknownOptionError: Message.send() got an unknown option 'dryrun'. Did you mean 'dry_run'?
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import threading
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from sendframe.errors import InputError
from sendframe.options import check_options

__all__ = ["SEND_OPTIONS", "SendOptions", "send_signature"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclasses.dataclass(frozen=True)
class SendOptions:
    """The options of a send besides the contacts (the message's own settings are not repeated here)."""

    client: Any = None
    """A sendframe ``Client`` or ``AsyncClient`` (None: from the environment)."""
    ledger: Any = None
    """A ledger file (or ``Ledger``) that makes the campaign resumable."""
    suppression: Any = None
    """Recipients never sent to, for this run (replaces the message's list)."""
    keep: str | Iterable[str] | None = None
    """Skip reasons to send anyway (``"duplicate"``, ``"invalid"``, ...)."""
    batch_size: int = 500
    concurrency: int = 4
    requests_per_second: float | None = None
    parts_per_second: float | None = None
    dry_run: bool = False
    resend_unknown: bool = False
    stop_after_unknown: int | None = 3
    progress: Any = True
    """True/False for a tqdm bar, or a tqdm-compatible object (``reset(total=)``, ``update(n)``)."""
    max_cost: float | None = None
    prices: Any = None
    callbacks: Any = None
    now: Any = None
    out: str | os.PathLike[str] | None = None
    cancel: threading.Event | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {self.concurrency}.")
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
    given = list(inspect.signature(function).parameters.values())
    hints = typing.get_type_hints(SendOptions)
    keywords = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name])
                for f in dataclasses.fields(SendOptions)]
    function.__signature__ = inspect.Signature([*given[:2], *keywords, *given[2:]])  # type: ignore[attr-defined]
    function.__annotations__ = {**function.__annotations__, **{f.name: hints[f.name]
                                                                for f in dataclasses.fields(SendOptions)}}
    return function
