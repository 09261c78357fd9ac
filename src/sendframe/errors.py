"""Every error sendframe raises, under one root.

    SendframeError
    ├── InputError                 bad input found before anything is sent (row, field, rule)
    │   ├── TemplateError          a template that cannot be parsed (unknown filter, ...)
    │   ├── MissingVariableError   a {variable} with no value for a row
    │   ├── RequestValidationError a request that breaks a rule of the spec (field path, rule)
    │   ├── UnknownOptionError     a keyword no function of sendframe knows (with "did you mean")
    │   └── LedgerMismatchError    a ledger that belongs to a campaign with other parameters
    ├── ConfigurationError         missing credentials, bad base URL, ...
    ├── LedgerInUseError           another run holds the ledger's lock
    ├── DiskFullError (OSError)    a write failed because the disk holding a file is full (names the file)
    └── ApiError                   the service answered with an error object (code, description)
        ├── AuthenticationError    401 / 403
        ├── NotFoundError          404
        ├── NotSentError           the request provably never reached the service (safe to send later)
        └── UnknownOutcomeError    a send whose fate is unknown (timeout after writing, reset, 5xx)

    SendframeWarning (UserWarning) something works but deserves attention
    ├── RowsSkippedWarning         a send leaves rows out (each keeps a skipped_* outcome)
    └── CampaignStoppedWarning     the service kept failing, so a campaign stopped starting batches

This module is the bottom layer: it imports nothing of sendframe, and every other module may import it.
Error codes are those of the spec plus ours; see docs/api-notes.md.

A full disk is met at every place sendframe writes (the ledger, the sandbox's database, the receiver's
log, ``--out`` files, the report) by one rule, :func:`full_disk_error`: the write's ``OSError`` (ENOSPC)
or SQLite's ``database or disk is full`` becomes a :class:`DiskFullError` that names the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum


class ErrorCode(IntEnum):
    """Error codes of the service (spec codes 102, 105, 140, 404; the rest decided in docs/api-notes.md)."""

    INVALID_REQUEST = 100
    TOO_MANY_RECIPIENTS = 101
    INVALID_RECIPIENT = 102
    TOO_MANY_PARTS = 105
    MISSING_VARIABLE = 107
    UNSUBSCRIBED = 108
    SENDER_NOT_VALIDATED = 110
    CHANNEL_NOT_ENABLED = 111
    INVALID_TEMPLATE = 140
    TEMPLATE_FIELDS = 141
    OTP_PENDING = 150
    UNAUTHORIZED = 401
    IP_NOT_ALLOWED = 403
    NOT_FOUND = 404
    TOO_LARGE = 413
    RATE_LIMITED = 429
    SERVER_ERROR = 500
    UNAVAILABLE = 503
    INSUFFICIENT_STORAGE = 507


class SendframeError(Exception):
    """Root of every error raised by sendframe."""


class InputError(SendframeError, ValueError):
    """Bad input found before anything was sent."""


class TemplateError(InputError):
    """A template that cannot be used, e.g. ``{name|shout}`` names no known filter."""


class MissingVariableError(InputError, KeyError):
    """A ``{variable}`` of the template has no value."""

    def __init__(self, name: str, row: object | None = None) -> None:
        self.name = name
        self.row = row
        where = f" in row {row!r}" if row is not None else ""
        super().__init__(f"The template needs the variable {{{name}}}, but it has no value{where}.")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class Problem:
    """One broken rule: where (``path``), which rule, and a plain-English message."""

    path: str
    rule: str
    message: str


class RequestValidationError(InputError):
    """A request that breaks one or more rules of the spec; ``.problems`` lists each one."""

    def __init__(self, problems: list[Problem], what: str = "request") -> None:
        self.problems = list(problems)
        lines = [f"The {what} is not valid:"] + [f"  - {p.path or '(body)'}: {p.message}" for p in self.problems]
        super().__init__("\n".join(lines))


class ConfigurationError(SendframeError):
    """Something needed to talk to the service is missing or wrong (credentials, base URL)."""


class ApiError(SendframeError):
    """The service answered with an error object."""

    def __init__(self, code: int, description: str, status: int | None = None) -> None:
        self.code = code
        self.description = description
        self.status = status
        super().__init__(f"The service answered {status or ''} with error {code}: {description}".replace("  ", " "))


class AuthenticationError(ApiError):
    """Missing or wrong credentials (401), or an IP address not registered (403)."""


class NotFoundError(ApiError):
    """The resource (e.g. a message id) is not known to the service (404)."""


class UnknownOutcomeError(ApiError):
    """A send whose outcome cannot be known: it may or may not have reached the service.

    Never retried automatically: re-sending could send twice.
    """


class NotSentError(ApiError):
    """The request provably never reached the service (connection refused, 429 after retries).

    Safe to send again later.
    """

    def __str__(self) -> str:
        return f"Nothing was sent (error {self.code}): {self.description}"


class UnknownOptionError(InputError, TypeError):
    """A keyword argument (or request field) that the function does not know.

    A ``TypeError`` too, as Python's own unexpected-keyword error is.
    """


class LedgerMismatchError(InputError):
    """The ledger belongs to a campaign with other parameters (channel, template or sender)."""


class LedgerInUseError(SendframeError):
    """Another run is sending with this ledger right now (it holds the ledger's lock file)."""


class DiskFullError(SendframeError, OSError):
    """A write failed because the disk holding ``path`` is full. An ``OSError`` too (``errno`` ENOSPC).

    Whatever failed to be written was not acknowledged or sent: ``advice`` says what to do once space is free.

        >>> str(DiskFullError("/data/spring.ledger.sqlite", "free space and run again."))
        'The disk holding /data/spring.ledger.sqlite is full: free space and run again.'
    """

    def __init__(self, path: str | os.PathLike[str], advice: str) -> None:
        self.path = os.fspath(path)
        self.advice = advice
        super().__init__(errno.ENOSPC, f"The disk holding {self.path} is full: {advice}", self.path)

    def __str__(self) -> str:  # OSError would add "[Errno 28]" and repeat the file name
        return str(self.strerror)

    def __reduce__(self) -> tuple[type[DiskFullError], tuple[str, str]]:
        return type(self), (self.path, self.advice)


# errno values of a write that found no room: no space left, or the user's disk quota used up
_NO_ROOM = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})
# below this many free bytes on its file system, an SQLite I/O error is taken to be the full disk
_NEARLY_FULL = 64 * 1024


def _free_bytes(path: str) -> int | None:
    try:
        stats = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except (OSError, AttributeError):  # no such folder; no statvfs (Windows)
        return None
    return stats.f_bavail * stats.f_frsize


def full_disk_error(error: BaseException, path: str | os.PathLike[str], advice: str) -> DiskFullError | None:
    """The :class:`DiskFullError` naming ``path`` when ``error`` (or its cause) comes from a full disk, else ``None``.

    A full disk is an ``OSError`` whose errno is ENOSPC (or EDQUOT), SQLite's SQLITE_FULL ("database or disk
    is full"), or another SQLite I/O error while the file system holding ``path`` has almost no free space
    (SQLite reports some writes that found no room, e.g. growing its ``-shm`` file, as plain I/O errors).

        >>> full_disk_error(OSError(errno.ENOSPC, "No space left on device"), "out.csv", "free space.").path
        'out.csv'
        >>> full_disk_error(sqlite3.OperationalError("database or disk is full"), "c.sqlite", "free space.") is None
        False
        >>> full_disk_error(PermissionError(errno.EACCES, "Permission denied"), "out.csv", "free space.") is None
        True
    """
    seen: BaseException | None = error
    chain: set[int] = set()
    while seen is not None and id(seen) not in chain:
        chain.add(id(seen))
        if isinstance(seen, DiskFullError):
            return seen
        if isinstance(seen, OSError) and seen.errno in _NO_ROOM:
            return DiskFullError(path, advice)
        if isinstance(seen, sqlite3.Error):
            code = getattr(seen, "sqlite_errorcode", None)
            primary = code & 0xFF if isinstance(code, int) else None
            if primary == sqlite3.SQLITE_FULL or (primary is None and "disk is full" in str(seen)):
                return DiskFullError(path, advice)
            if primary == sqlite3.SQLITE_IOERR:
                free = _free_bytes(os.fspath(path))
                if free is not None and free < _NEARLY_FULL:
                    return DiskFullError(path, advice)
        seen = seen.__cause__ or seen.__context__
    return None


@contextlib.contextmanager
def naming_full_disk(path: str | os.PathLike[str], advice: str, *, torn: bool = False) -> Iterator[None]:
    """Run the block that writes ``path``; a failure from a full disk is raised as :class:`DiskFullError`
    (from the original error), any other failure as it is. ``torn``: the block writes the file whole, so
    on a full disk the part written is removed rather than left to be read as if it were complete.

        >>> with naming_full_disk("/dev/full", "free space."):  # doctest: +ELLIPSIS
        ...     with open("/dev/full", "w") as file:
        ...         _ = file.write("x")
        Traceback (most recent call last):
        ...
        sendframe.errors.DiskFullError: The disk holding /dev/full is full: free space.
    """
    try:
        yield
    except (OSError, sqlite3.Error) as error:
        full = full_disk_error(error, path, advice)
        if full is None:
            raise
        if torn and os.path.isfile(path):  # a regular file only: never a device such as /dev/full
            with contextlib.suppress(OSError):
                os.remove(path)
        if full is error:
            raise
        raise full from error


class SendframeWarning(UserWarning):
    """Something works but deserves the analyst's attention (plain-http base URL, unknown outcomes)."""


class RowsSkippedWarning(SendframeWarning):
    """Some rows of a send are left out by the policy (invalid, suppressed, repeated, preflight errors)."""


class CampaignStoppedWarning(SendframeWarning):
    """The service kept failing with unknown outcomes, so the campaign stopped starting batches."""
