"""Tracked links of the sandbox: short links, unsubscribe pages, landing pages and the email open pixel.

The makers (``short_link`` ...) are plain functions on the sandbox state, used by
:mod:`~sendframe.sandbox.sending` while it renders a message; :func:`routes` gives the browser pages
that serve them. Lengths and paths are those of docs/api-notes.md ("Generated links"): ``/s/`` + 8
characters, ``/u/``, ``/l/`` and ``/o/`` + 12 (``.gif`` after the pixel's token). Tokens are
alphanumeric (``A-Z a-z 0-9``, URL-safe and never trimmed by phone autolinkers that drop a trailing
``-`` or ``_``) and come from :mod:`secrets`.

Visits are recorded in the shared ``events`` table: a short link or landing page visit is a
``clicked`` event (browser, OS and mobile flag from the User-Agent) and sets ``messages.is_clicked``;
the pixel is an ``opened`` event and sets ``messages.is_opened``. A ``HEAD`` request records nothing.

Unsubscribing takes a ``POST``: ``GET /u/<token>`` only shows a confirmation form, because mail
scanners and link previewers fetch every link of a message.

    >>> from sendframe.sandbox.state import SandboxState
    >>> state = SandboxState.create(public_url="http://127.0.0.1:8080")
    >>> link = short_link(state, message_id="3f2a...", url="https://shop.example/sale")
    >>> link.startswith("http://127.0.0.1:8080/s/"), len(link.rsplit("/", 1)[1])
    (True, 8)
"""

from __future__ import annotations

import base64
import html
import secrets
import sqlite3
import string
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from sendframe.errors import InputError
from sendframe.sandbox.useragent import parse_user_agent

__all__ = [
    "LANDING_CSP",
    "LONG_TOKEN_LENGTH",
    "PAGE_CSP",
    "SCHEMA",
    "SHORT_CODE_LENGTH",
    "TOKEN_ALPHABET",
    "is_unsubscribed",
    "landing_link",
    "open_pixel",
    "recipient_key",
    "routes",
    "short_link",
    "short_links",
    "unsubscribe_link",
]

SHORT_CODE_LENGTH = 8
LONG_TOKEN_LENGTH = 12
TOKEN_ALPHABET = string.ascii_letters + string.digits

SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS links(
        token TEXT PRIMARY KEY,
        kind TEXT NOT NULL,           -- short, unsubscribe, landing, pixel
        message_id TEXT,
        account TEXT,
        recipient TEXT,               -- recipient_key(to), unsubscribe links only
        url TEXT,                     -- short links only
        html TEXT,                    -- landing pages only
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS links_by_message ON links(message_id, kind)",
    """
    CREATE TABLE IF NOT EXISTS unsubscribes(
        account TEXT NOT NULL,
        recipient TEXT NOT NULL,
        message_id TEXT,
        date TEXT NOT NULL,
        PRIMARY KEY (account, recipient)
    )
    """,
)

_PREFIX = {"short": "s", "unsubscribe": "u", "landing": "l", "pixel": "o"}
# the smallest transparent GIF: 1x1, one colour
PIXEL_GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
_NO_STORE = {"Cache-Control": "no-store"}
# Every page shares its origin with the API and the control surface, so none may run a script or send a
# form with the visitor's rights (docs/sandbox.md, threat model). Our own pages (unsubscribe, not found)
# load nothing and post only to themselves; no page may be framed, and no page tells others its token.
_SAFE = {**_NO_STORE, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
PAGE_CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
# The landing page is the customer's own HTML: it is served sandboxed (an opaque origin: it cannot read or
# call the sandbox as its visitor), without scripts or forms; images, styles, fonts and media may load,
# and links open in new windows outside the sandbox.
LANDING_CSP = ("sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; "
               "img-src http: https: data:; style-src http: https: 'unsafe-inline'; font-src http: https: data:; "
               "media-src http: https: data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
_PAGE_HEADERS = {**_SAFE, "Content-Security-Policy": PAGE_CSP}
_LANDING_HEADERS = {**_SAFE, "Content-Security-Policy": LANDING_CSP}


def recipient_key(to: str) -> str:
    """The form under which a recipient is remembered (unsubscribes, OTP codes): trimmed and lower-cased.

    >>> recipient_key(" Ana@Example.COM ")
    'ana@example.com'
    """
    return str(to).strip().lower()


def _now_text(state: Any) -> str:
    now: datetime = state.clock.now()
    return now.isoformat(timespec="seconds")


def _public_url(state: Any) -> str:
    return str(state.public_url).rstrip("/")


def _store(state: Any, kind: str, length: int, **columns: Any) -> str:
    """Insert a link row under a fresh random token (retrying the astronomically rare collision)."""
    names = ", ".join(["token", "kind", "created_at", *columns])
    marks = ", ".join("?" * (3 + len(columns)))
    for _ in range(8):
        token = "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(length))
        try:
            with state.db:
                state.db.execute(
                    f"INSERT INTO links({names}) VALUES ({marks})", (token, kind, _now_text(state), *columns.values())
                )
        except sqlite3.IntegrityError:
            continue
        return token
    raise RuntimeError("could not find a free link token")  # pragma: no cover - 62**8 possibilities


def _existing(state: Any, sql: str, args: tuple[Any, ...]) -> str | None:
    row = state.db.execute(sql, args).fetchone()
    return row[0] if row else None


def _link(state: Any, kind: str, token: str) -> str:
    suffix = ".gif" if kind == "pixel" else ""
    return f"{_public_url(state)}/{_PREFIX[kind]}/{token}{suffix}"


def _http_url(url: str) -> str:
    """``url`` trimmed, or ``InputError`` when it is not an ``http``/``https`` address."""
    url = str(url).strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise InputError(f"The shorten filter needs an http or https URL, not {url!r}.")
    return url


def short_link(state: Any, *, message_id: str, url: str) -> str:
    """The short link (``{public_url}/s/`` + 8 characters) that redirects to ``url`` for one message.

    The same URL in the same message gives the same link; each message gets its own, so clicks are
    counted per recipient. ``url`` must be an ``http``/``https`` address.

    >>> short_link(state, message_id="m1", url="https://shop.example/sale")  # doctest: +SKIP
    'http://127.0.0.1:8080/s/Xb7Qp2Lm'
    """
    url = _http_url(url)
    token = _existing(
        state, "SELECT token FROM links WHERE kind = 'short' AND message_id = ? AND url = ?", (message_id, url)
    )
    if token is None:
        token = _store(state, "short", SHORT_CODE_LENGTH, message_id=message_id, url=url)
    return _link(state, "short", token)


def short_links(state: Any, *, message_id: str, urls: Iterable[str]) -> dict[str, str]:
    """The short links of many URLs of one message at once (click tracking of an email): ``{url: link}`` for
    every ``http``/``https`` URL (others are left out), the same as :func:`short_link` gives one by one, in
    one transaction.

    >>> short_links(state, message_id="m1", urls=["https://a.example/", "mailto:x@y.example"])  # doctest: +SKIP
    {'https://a.example/': 'http://127.0.0.1:8080/s/Xb7Qp2Lm'}
    """
    wanted: dict[str, str] = {}
    for url in urls:
        try:
            wanted.setdefault(url, _http_url(url))
        except InputError:
            continue
    known = dict(state.db.execute("SELECT url, token FROM links WHERE kind = 'short' AND message_id = ?",
                                  (message_id,)))
    new = sorted({clean for clean in wanted.values() if clean not in known})
    rows = [("".join(secrets.choice(TOKEN_ALPHABET) for _ in range(SHORT_CODE_LENGTH)), message_id, url) for url in new]
    try:
        with state.db:
            state.db.executemany("INSERT INTO links(token, kind, message_id, url, created_at) "
                                 "VALUES (?, 'short', ?, ?, ?)", [(*row, _now_text(state)) for row in rows])
        known.update((url, token) for token, _, url in rows)
    except sqlite3.IntegrityError:  # a token already taken (astronomically rare): one by one, each retried
        for url in new:
            known[url] = _store(state, "short", SHORT_CODE_LENGTH, message_id=message_id, url=url)
    return {url: _link(state, "short", known[clean]) for url, clean in wanted.items()}


def unsubscribe_link(state: Any, *, account: str, message_id: str, recipient: str) -> str:
    """The unsubscribe page of one message (``{public_url}/u/`` + 12 characters), for ``{UNSUB_URL}``
    and the email ``[unsubscribe_link]``.

    >>> unsubscribe_link(state, account="demo", message_id="m1", recipient="447700900123")  # doctest: +SKIP
    'http://127.0.0.1:8080/u/k3J9xQ2mPa7Z'
    """
    key = recipient_key(recipient)
    token = _existing(
        state,
        "SELECT token FROM links WHERE kind = 'unsubscribe' AND message_id = ? AND account = ? AND recipient = ?",
        (message_id, account, key),
    )
    if token is None:
        token = _store(
            state, "unsubscribe", LONG_TOKEN_LENGTH, message_id=message_id, account=account, recipient=key
        )
    return _link(state, "unsubscribe", token)


def landing_link(state: Any, *, message_id: str, html: str) -> str:
    """Store the landing page ``html`` of one message and return its address (``{public_url}/l/`` + 12).

    >>> landing_link(state, message_id="m1", html="<h1>Sale</h1>")  # doctest: +SKIP
    'http://127.0.0.1:8080/l/Pq8Rt1Vw3XyZ'
    """
    token = _store(state, "landing", LONG_TOKEN_LENGTH, message_id=message_id, html=str(html))
    return _link(state, "landing", token)


def open_pixel(state: Any, *, message_id: str) -> str:
    """The address of the open-tracking pixel of one email (``{public_url}/o/`` + 12 + ``.gif``).

    >>> open_pixel(state, message_id="m1")  # doctest: +SKIP
    'http://127.0.0.1:8080/o/Zr4Tq9Wb2Nc1.gif'
    """
    token = _existing(state, "SELECT token FROM links WHERE kind = 'pixel' AND message_id = ?", (message_id,))
    if token is None:
        token = _store(state, "pixel", LONG_TOKEN_LENGTH, message_id=message_id)
    return _link(state, "pixel", token)


def is_unsubscribed(state: Any, *, account: str, recipient: str) -> bool:
    """Whether ``recipient`` unsubscribed from ``account`` through one of its unsubscribe pages.

    >>> is_unsubscribed(state, account="demo", recipient="447700900123")  # doctest: +SKIP
    False
    """
    row = state.db.execute(
        "SELECT 1 FROM unsubscribes WHERE account = ? AND recipient = ?", (account, recipient_key(recipient))
    ).fetchone()
    return row is not None


# ---- pages --------------------------------------------------------------------------------------


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{html.escape(title)}</title></head>\n<body>{body}</body></html>\n"
    )
    return HTMLResponse(document, status_code=status, headers=_PAGE_HEADERS)


def _not_found() -> HTMLResponse:
    return _page("Link not found", "<h1>Link not found</h1><p>This link does not exist or has been removed.</p>", 404)


def _lookup(state: Any, kind: str, token: str, length: int) -> tuple[Any, ...] | None:
    if len(token) != length or any(ch not in TOKEN_ALPHABET for ch in token):
        return None
    row: tuple[Any, ...] | None = state.db.execute(
        "SELECT token, message_id, account, recipient, url, html FROM links WHERE token = ? AND kind = ?",
        (token, kind),
    ).fetchone()
    return row


def _event(state: Any, request: Request, message_id: str | None, event: str) -> tuple[Any, ...]:
    """The ``events`` row of a visit now: the User-Agent's mobile flag, browser and OS."""
    is_mobile, browser, os_name = parse_user_agent(request.headers.get("user-agent", ""))
    return (message_id, event, _now_text(state), int(bool(is_mobile)), browser or "", os_name or "")


_INSERT_EVENT = "INSERT INTO events(message_id, type, date, is_mobile, browser, os) VALUES (?, ?, ?, ?, ?, ?)"


def _tracked_page(kind: str, param: str, length: int, event: str, flag: str,
                  answer: Callable[[tuple[Any, ...]], Response], doc: str) -> Callable[[Request], Awaitable[Response]]:
    """A page behind a token of ``kind``: 404 for an unknown token; otherwise, unless the request is a
    ``HEAD``, one ``event`` of the message with its ``flag`` column set; then ``answer(row)``."""

    async def page(request: Request) -> Response:
        state = request.app.state.sandbox
        row = _lookup(state, kind, request.path_params[param], length)
        if row is None:
            return _not_found()
        if request.method != "HEAD":
            with state.db:
                state.db.execute(_INSERT_EVENT, _event(state, request, row[1], event))
                state.db.execute(f"UPDATE messages SET {flag} = 1 WHERE id = ?", (row[1],))
        return answer(row)

    page.__doc__ = doc
    return page


short_link_page = _tracked_page(
    "short", "code", SHORT_CODE_LENGTH, "clicked", "is_clicked",
    lambda row: RedirectResponse(row[4], status_code=302, headers=_SAFE),
    "``GET /s/<code>``: 302 to the original URL, recording a ``clicked`` event.")

landing_page = _tracked_page(
    "landing", "token", LONG_TOKEN_LENGTH, "clicked", "is_clicked",
    lambda row: HTMLResponse(row[5] or "", headers=_LANDING_HEADERS),
    "``GET /l/<token>``: the stored landing page (sandboxed: no scripts, no forms), recording a ``clicked`` event.")

open_pixel_image = _tracked_page(
    "pixel", "token", LONG_TOKEN_LENGTH, "opened", "is_opened",
    lambda row: Response(PIXEL_GIF, media_type="image/gif", headers=_SAFE),
    "``GET /o/<token>.gif``: a 1x1 transparent GIF, recording an ``opened`` event.")


def _unsubscribe_form(token: str, recipient: str) -> str:
    return (
        "<h1>Unsubscribe</h1>"
        f"<p>Stop receiving messages from this sender at <strong>{html.escape(recipient)}</strong>?</p>"
        f"<form method=\"post\" action=\"/u/{html.escape(token)}\">"
        "<button type=\"submit\">Unsubscribe</button></form>"
    )


async def unsubscribe_page(request: Request) -> Response:
    """``GET /u/<token>`` shows a confirmation form; ``POST /u/<token>`` unsubscribes.

    A POST adds (account, recipient) to ``unsubscribes`` and an ``unsubscribed`` event to the message,
    once; repeating it changes nothing and shows the same confirmation.
    """
    state = request.app.state.sandbox
    row = _lookup(state, "unsubscribe", request.path_params["token"], LONG_TOKEN_LENGTH)
    if row is None:
        return _not_found()
    token, message_id, account, recipient = row[0], row[1], row[2], row[3]
    done = "<h1>You are unsubscribed</h1><p>You will no longer receive messages from this sender at " + (
        f"<strong>{html.escape(recipient)}</strong>.</p>"
    )
    if request.method == "POST":
        visit = _event(state, request, message_id, "unsubscribed")
        with state.db:
            added = state.db.execute(
                "INSERT OR IGNORE INTO unsubscribes(account, recipient, message_id, date) VALUES (?, ?, ?, ?)",
                (account, recipient, message_id, visit[2]),
            ).rowcount
            if added:
                state.db.execute(_INSERT_EVENT, visit)
        return _page("Unsubscribed", done)
    if is_unsubscribed(state, account=account, recipient=recipient):
        return _page("Unsubscribed", done)
    return _page("Unsubscribe", _unsubscribe_form(token, recipient))


def routes() -> list[Route]:
    """The browser pages the app mounts.

    >>> sorted(r.path for r in routes())
    ['/l/{token}', '/o/{token}.gif', '/s/{code}', '/u/{token}']
    """
    return [
        Route("/s/{code}", short_link_page, methods=["GET"]),
        Route("/l/{token}", landing_page, methods=["GET"]),
        Route("/o/{token}.gif", open_pixel_image, methods=["GET"]),
        Route("/u/{token}", unsubscribe_page, methods=["GET", "POST"]),
    ]
