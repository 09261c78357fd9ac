"""One-time passwords: codes issued for ``{OTP_CODE}`` and the ``POST /api/rest/otp/check`` route.

The store knows nothing of HTTP; the route at the bottom translates a request into :func:`check_code`.
Codes come from :mod:`secrets`, the ``otp_codes`` table keeps only salted SHA-256 digests of them, and
they expire on the sandbox's clock (``state.clock``), so a manual clock expires them when advanced. The
code itself is in the message text as delivered (the simulated phone's inbox, where a test reads it),
so the state file is created 0600 (docs/sandbox.md, threat model).

Rules (``otpConfig`` of the spec, docs/api-notes.md "Other endpoints" and "OTP codes"):

- one code is pending per (account, recipient, ``appId``): the same phone or email may be validated
  simultaneously only under different ``appId`` values; a new code for the same triple replaces the
  pending one, unless ``rejectIfPendingCode`` is true, in which case no code is issued (code 150);
- a code is consumed by its first valid check; ``maxAttempts`` wrong tries block it;
- alphanumeric codes use ``A-Z`` and ``0-9`` and are checked without regard to case.

    >>> from sendframe.sandbox.state import SandboxState
    >>> state = SandboxState.create(clock="manual")
    >>> code = issue_code(state, account="demo", to="447700900123", config={"length": 6})
    >>> check_code(state, account="demo", to="447700900123", code=code, app_id="")
    {'valid': True, 'status': 'valid', 'attemptsLeft': 0}
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from sendframe.api.models import OtpCheckRequest, parse_body
from sendframe.api.validation import decode_json
from sendframe.errors import InputError
from sendframe.sandbox.links import recipient_key
from sendframe.sandbox.web import authenticate, guarded, off_loop, read_body

__all__ = ["DEFAULTS", "LIMITS", "SCHEMA", "check_code", "issue_code", "otp_config", "routes"]

SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS otp_codes(
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        recipient TEXT NOT NULL,      -- recipient_key(to): the toolkit's recipient key
        app_id TEXT NOT NULL,
        salt TEXT NOT NULL,
        digest TEXT NOT NULL,         -- sha256(salt + code), hex; the code itself is never stored
        alpha INTEGER NOT NULL,
        max_attempts INTEGER NOT NULL,
        attempts_left INTEGER NOT NULL,
        status TEXT NOT NULL,         -- pending, used, blocked, replaced
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS otp_codes_by_recipient ON otp_codes(account, recipient, app_id, status)",
)

DEFAULTS: dict[str, Any] = {
    "alpha": False,
    "length": 4,
    "maxAttempts": 3,
    "maxSecondsValidity": 60,
    "appId": "",
    "rejectIfPendingCode": False,
}
LIMITS: dict[str, tuple[int, int]] = {"length": (3, 10), "maxAttempts": (1, 10), "maxSecondsValidity": (30, 600)}

_SNAKE_TO_WIRE = {
    "max_attempts": "maxAttempts",
    "max_seconds_validity": "maxSecondsValidity",
    "app_id": "appId",
    "reject_if_pending_code": "rejectIfPendingCode",
}
_NUMERIC = string.digits
_ALPHANUMERIC = string.ascii_uppercase + string.digits


def otp_config(config: Mapping[str, Any] | Any | None) -> dict[str, Any]:
    """The full ``otpConfig`` with defaults filled in, keyed by wire names; raises on a value out of range.

    Accepts the wire dict (``maxAttempts``), snake_case keys, a pydantic ``OtpConfig`` or ``None``;
    an explicit ``None`` value means "use the default".

    >>> otp_config({"length": 6, "app_id": "login"})["appId"]
    'login'
    """
    if config is None:
        raw: Mapping[str, Any] = {}
    elif hasattr(config, "model_dump"):
        raw = config.model_dump(by_alias=True, exclude_none=True)
    else:
        raw = config
    merged = dict(DEFAULTS)
    for key, value in raw.items():
        name = _SNAKE_TO_WIRE.get(key, key)
        if name in merged and value is not None:
            merged[name] = value
    for name in ("alpha", "rejectIfPendingCode"):
        if not isinstance(merged[name], bool):
            raise InputError(f"otpConfig.{name} must be true or false, not {merged[name]!r}.")
    if not isinstance(merged["appId"], str):
        raise InputError(f"otpConfig.appId must be a string, not {merged['appId']!r}.")
    for name, (low, high) in LIMITS.items():
        value = merged[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InputError(f"otpConfig.{name} must be a whole number from {low} to {high}, not {value!r}.")
    return merged


def _digest(salt: str, code: str) -> str:
    return hashlib.sha256((salt + code).encode()).hexdigest()


def _now(state: Any) -> datetime:
    now: datetime = state.clock.now()
    return now


def _pending_filter(now: datetime) -> tuple[str, tuple[str]]:
    return "status = 'pending' AND attempts_left > 0 AND expires_at > ?", (now.isoformat(),)


def issue_code(state: Any, *, account: str, to: str, config: Mapping[str, Any] | Any | None) -> str | None:
    """Generate and store a new code for ``to``; ``None`` when refused because one is pending.

    The refusal only happens with ``rejectIfPendingCode``; otherwise a pending code of the same
    (account, recipient, appId) is replaced and can no longer be checked.

    >>> from sendframe.sandbox.state import SandboxState
    >>> state = SandboxState.create(clock="manual")
    >>> code = issue_code(state, account="demo", to="ana@example.com", config={"alpha": True, "length": 8})
    >>> len(code), code.isalnum() and code.isupper() or code.isdigit()
    (8, True)
    """
    cfg = otp_config(config)
    now = _now(state)
    key = recipient_key(to)
    alphabet = _ALPHANUMERIC if cfg["alpha"] else _NUMERIC
    code = "".join(secrets.choice(alphabet) for _ in range(cfg["length"]))
    salt = secrets.token_hex(8)
    pending_sql, pending_args = _pending_filter(now)
    with state.db:
        pending = state.db.execute(
            f"SELECT seq FROM otp_codes WHERE account = ? AND recipient = ? AND app_id = ? AND {pending_sql}",
            (account, key, cfg["appId"], *pending_args),
        ).fetchall()
        if pending and cfg["rejectIfPendingCode"]:
            return None
        state.db.execute(
            "UPDATE otp_codes SET status = 'replaced' "
            "WHERE account = ? AND recipient = ? AND app_id = ? AND status = 'pending'",
            (account, key, cfg["appId"]),
        )
        state.db.execute(
            "INSERT INTO otp_codes(account, recipient, app_id, salt, digest, alpha, max_attempts, attempts_left,"
            " status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
            (
                account,
                key,
                cfg["appId"],
                salt,
                _digest(salt, code),
                int(cfg["alpha"]),
                cfg["maxAttempts"],
                cfg["maxAttempts"],
                now.isoformat(),
                (now + timedelta(seconds=cfg["maxSecondsValidity"])).isoformat(),
            ),
        )
    return code


def _result(valid: bool, status: str, attempts_left: int) -> dict[str, Any]:
    return {"valid": valid, "status": status, "attemptsLeft": attempts_left}


def check_code(state: Any, *, account: str, to: str, code: str, app_id: str = "") -> dict[str, Any]:
    """Check ``code`` against the latest code issued to ``to`` under ``app_id``: the OtpCheckResult wire dict.

    ``status`` is ``valid`` (the code is consumed), ``invalid`` (a wrong try; ``attemptsLeft`` says how many
    remain), ``expired``, ``blocked`` (``maxAttempts`` wrong tries used up) or ``not_found`` (no code was
    issued, or it was already consumed or replaced). Only a wrong try on a pending code uses an attempt.

    >>> from sendframe.sandbox.state import SandboxState
    >>> state = SandboxState.create(clock="manual")
    >>> _ = issue_code(state, account="demo", to="447700900123", config={"length": 6, "maxAttempts": 3})
    >>> check_code(state, account="demo", to="447700900123", code="x", app_id="")
    {'valid': False, 'status': 'invalid', 'attemptsLeft': 2}
    """
    now = _now(state)
    with state.db:
        row = state.db.execute(
            "SELECT seq, salt, digest, alpha, attempts_left, status, expires_at FROM otp_codes"
            " WHERE account = ? AND recipient = ? AND app_id = ? ORDER BY seq DESC LIMIT 1",
            (account, recipient_key(to), app_id or ""),
        ).fetchone()
        if row is None:
            return _result(False, "not_found", 0)
        seq, salt, digest, alpha, attempts_left, status, expires_at = row
        if status in ("used", "replaced"):
            return _result(False, "not_found", 0)
        if status == "blocked" or attempts_left <= 0:
            return _result(False, "blocked", 0)
        if datetime.fromisoformat(expires_at) <= now:
            return _result(False, "expired", 0)
        given = str(code).strip()
        if alpha:
            given = given.upper()
        if hmac.compare_digest(_digest(salt, given), digest):
            state.db.execute("UPDATE otp_codes SET status = 'used' WHERE seq = ?", (seq,))
            return _result(True, "valid", 0)
        attempts_left -= 1
        state.db.execute(
            "UPDATE otp_codes SET attempts_left = ?, status = ? WHERE seq = ?",
            (attempts_left, "pending" if attempts_left > 0 else "blocked", seq),
        )
        return _result(False, "invalid", attempts_left)


# ---- HTTP ---------------------------------------------------------------------------------------


def _parse_check(raw: bytes) -> OtpCheckRequest:
    body = decode_json(raw, checked_by_model=True)  # the request model applies the body rule
    return parse_body(OtpCheckRequest, body, "OTP check request")  # type: ignore[no-any-return]


@guarded
async def check_route(request: Request) -> Response:
    """``POST /api/rest/otp/check``: ``{"to", "code", "appId"}`` -> 200 ``{"data": OtpCheckResult}``.

    Authentication, body limits and failures are answered by the shared plumbing (error objects: 401, 403,
    413, 400 code 100 naming the field); a large body is decoded and validated off the event loop.
    """
    account = await authenticate(request)
    raw = await read_body(request)
    check = await off_loop(len(raw), _parse_check, raw)
    state = request.app.state.sandbox
    return JSONResponse({"data": check_code(state, account=account, to=check.to, code=check.code, app_id=check.app_id)})


def routes() -> list[Route]:
    """The OTP routes the app mounts.

    >>> [r.path for r in routes()]
    ['/api/rest/otp/check']
    """
    return [Route("/api/rest/otp/check", check_route, methods=["POST"])]
