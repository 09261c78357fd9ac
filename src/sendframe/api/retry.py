"""What may be retried, and how long to wait: pure decisions, no I/O.

A lookup (GET) cannot change anything on the service, so it is retried on connection errors,
timeouts, 429 and 5xx. A send (POST) is retried only when it provably never reached the service:
the connection was refused or could not be opened in time, or the service answered 429 (it
refused to process the request). Anything else after the request may have been written (a read
timeout, a reset, a closed connection, a 5xx) is an *unknown outcome*: the messages may or may not
have been sent, so re-sending could send them twice. Those are never retried.

    >>> policy = RetryPolicy(max_attempts=3, base_delay=0.1, max_delay=1.0, jitter=False)
    >>> decide_response("POST", 429, attempt=1, policy=policy, retry_after="2").action
    'retry'
    >>> decide_response("POST", 500, attempt=1, policy=policy).action
    'unknown'
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal

import httpx

Action = Literal["retry", "unknown", "fail", "done"]

# Failures that happen before a single byte of the request reached the service.
NEVER_SENT_ERRORS: tuple[type[Exception], ...] = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to try and how long to wait between tries.

    The wait before attempt ``n + 1`` is ``base_delay * 2 ** (n - 1)``, capped at ``max_delay``,
    with "full jitter" (a uniform draw between half of it and all of it) unless ``jitter=False``.
    A ``Retry-After`` header (seconds or an HTTP-date) from a 429 or 503 wins when it is longer, still
    capped by ``max_retry_after``.

        >>> RetryPolicy(base_delay=0.5, max_delay=4.0, jitter=False).delay(4)
        4.0
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: bool = True
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"RetryPolicy.max_attempts must be at least 1, got {self.max_attempts}.")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy delays must not be negative.")

    def delay(self, attempt: int, retry_after: str | float | None = None) -> float:
        """Seconds to wait after the failed attempt number ``attempt`` (1-based).

            >>> RetryPolicy(base_delay=1.0, jitter=False).delay(1, retry_after="3")
            3.0
        """
        backoff = min(self.max_delay, self.base_delay * 2.0 ** max(0, attempt - 1))
        if self.jitter:
            backoff = random.uniform(backoff / 2, backoff)
        hinted = parse_retry_after(retry_after)
        if hinted is not None:
            backoff = max(backoff, min(hinted, self.max_retry_after))
        return backoff


NO_RETRY = RetryPolicy(max_attempts=1)


@dataclass(frozen=True)
class Decision:
    """What to do after one attempt: ``retry`` (after ``delay`` seconds), ``unknown``, ``fail`` or ``done``."""

    action: Action
    delay: float = 0.0
    reason: str = ""


def parse_retry_after(value: str | float | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value, in either form of RFC 9110, or None when unreadable.

    The value is delay-seconds (``"120"``; a fraction is accepted) or an HTTP-date
    (``"Wed, 21 Oct 2026 07:28:00 GMT"``), counted from ``now`` (default: the current UTC time).
    A negative delay or a date in the past gives 0. The upper bound is the policy's
    ``max_retry_after``, applied by :meth:`RetryPolicy.delay`.

        >>> parse_retry_after("2"), parse_retry_after("soon"), parse_retry_after("-3")
        (2.0, None, 0.0)
        >>> parse_retry_after("Wed, 21 Oct 2026 07:28:30 GMT", now=datetime(2026, 10, 21, 7, 28, tzinfo=UTC))
        30.0
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        text = str(value).strip()
        try:
            seconds = float(text)
        except ValueError:
            until = _seconds_until(text, now)
            if until is None:
                return None
            seconds = until
    if math.isnan(seconds):
        return None
    return max(0.0, seconds)


def _seconds_until(http_date: str, now: datetime | None) -> float | None:
    try:
        moment = parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:  # "-0000" (or no zone): HTTP-dates are always GMT
        moment = moment.replace(tzinfo=UTC)
    return (moment - (now or datetime.now(UTC))).total_seconds()


def is_idempotent(method: str) -> bool:
    """True for methods that cannot change anything on the service (lookups)."""
    return method.upper() in {"GET", "HEAD", "OPTIONS"}


def describe_exception(exc: BaseException) -> str:
    """A plain-English account of a transport failure, without any header or credential."""
    kind = type(exc).__name__
    if isinstance(exc, NEVER_SENT_ERRORS):
        return f"could not connect to the service ({kind}); the request was never sent"
    if isinstance(exc, httpx.ReadTimeout):
        return f"no answer within the timeout after the request was sent ({kind})"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return f"the connection was closed or reset after the request was sent ({kind})"
    if isinstance(exc, (httpx.WriteError, httpx.WriteTimeout)):
        return f"the connection failed while the request was being written ({kind})"
    return f"the request failed in transit ({kind})"


def decide_exception(method: str, exc: BaseException, *, attempt: int, policy: RetryPolicy) -> Decision:
    """Decide after a transport exception (no answer was received).

        >>> import httpx
        >>> decide_exception("POST", httpx.ReadTimeout("t"), attempt=1, policy=RetryPolicy()).action
        'unknown'
    """
    reason = describe_exception(exc)
    never_sent = isinstance(exc, NEVER_SENT_ERRORS)
    if not is_idempotent(method) and not never_sent:
        return Decision("unknown", reason=reason)
    if not isinstance(exc, httpx.TransportError):
        return Decision("fail", reason=reason)
    if attempt >= policy.max_attempts:
        return Decision("fail", reason=f"{reason}; gave up after {attempt} attempts")
    return Decision("retry", delay=policy.delay(attempt), reason=reason)


def decide_response(
    method: str, status: int, *, attempt: int, policy: RetryPolicy, retry_after: str | None = None
) -> Decision:
    """Decide after the service answered with HTTP ``status``.

        >>> decide_response("GET", 503, attempt=1, policy=RetryPolicy(jitter=False, base_delay=0.1)).delay
        0.1
    """
    if status < 400 or status in {400, 401, 403, 404, 413}:
        return Decision("done")
    retryable = status == 429 or (status >= 500 and is_idempotent(method))
    if status >= 500 and not is_idempotent(method):
        return Decision("unknown",
                        reason=f"the service answered HTTP {status}; the send may or may not have been processed")
    if retryable and attempt < policy.max_attempts:
        return Decision("retry", delay=policy.delay(attempt, retry_after), reason=f"HTTP {status}")
    return Decision("done")
