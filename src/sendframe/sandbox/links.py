"""Tracked links of the sandbox: short links, unsubscribe pages, landing pages and the email open pixel.

The makers (``short_link`` ...) are plain functions on the sandbox state, used by
:mod:`~sendframe.sandbox.sending` while it renders a message; :func:`routes` gives the browser pages
that serve them. Lengths and paths are those of docs/api-notes.md ("Generated links"): ``/s/`` + 8
characters, ``/u/``, ``/l/`` and ``/o/`` + 12 (``.gif`` after the pixel's token). Tokens are
alphanumeric (``A-Z a-z 0-9``, URL-safe and never trimmed by phone autolinkers that drop a trailing
``-`` or ``_``) and come from :mod:`secrets`. A 12-character token starts with 4 characters of the clock
(:func:`time_prefix`) and ends with 8 random ones, as many as a short code has: a request's tokens then sit
side by side in the token index, so storing a million links does not dirty one random index page per link.

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
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from sendframe.api import recipients
from sendframe.errors import InputError
from sendframe.sandbox.useragent import parse_user_agent

__all__ = [
    "LANDING_CSP",
    "LONG_TOKEN_LENGTH",
    "PAGE_CSP",
    "NewLinks",
    "SCHEMA",
    "SHORT_CODE_LENGTH",
    "TOKEN_ALPHABET",
    "is_unsubscribed",
    "landing_link",
    "open_pixel",
    "recipient_key",
    "new_tokens",
    "time_prefix",
    "routes",
    "short_link",
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
    """The form under which a recipient is remembered (unsubscribes, OTP codes): the toolkit's
    :func:`~sendframe.api.recipients.recipient_key` of an API-form recipient (numbers as they are,
    emails trimmed and case-folded); text that is no valid recipient is kept trimmed.

    >>> recipient_key(" Ana@Example.COM "), recipient_key("447700900123")
    ('ana@example.com', '447700900123')
    """
    text = str(to).strip()
    if recipients.is_valid_phone(text):  # API form already: its own key (what recipient_key answers, sooner)
        return text
    return recipients.recipient_key(text, "any", default_region=None) or text


def _now_text(state: Any) -> str:
    now: datetime = state.clock.now()
    return now.isoformat(timespec="seconds")


def _public_url(state: Any) -> str:
    return str(state.public_url).rstrip("/")


# token_bytes -> alphabet: a byte below 248 (4 x 62) picks TOKEN_ALPHABET[byte % 62], a byte from 248 up is
# dropped (bytes.translate's delete), so every character is equally likely
_BYTE_TO_CHAR = bytes(ord(TOKEN_ALPHABET[b % len(TOKEN_ALPHABET)]) for b in range(248)) + bytes(8)
_DROPPED = bytes(range(248, 256))


TIME_PREFIX_LENGTH = 4
_SORTED_ALPHABET = "".join(sorted(TOKEN_ALPHABET))  # prefixes of later times sort after earlier ones


def time_prefix(now_ns: int | None = None) -> str:
    """The first characters of a 12-character token: the time in tenths of a second, modulo 62**4 (about 17
    days), in characters that sort like the numbers, so tokens made together share it and later ones come after.

    >>> time_prefix(0), time_prefix(100_000_000), len(time_prefix())
    ('0000', '0001', 4)
    """
    value = ((time.time_ns() if now_ns is None else now_ns) // 100_000_000) % len(_SORTED_ALPHABET) ** 4
    digits = []
    for _ in range(TIME_PREFIX_LENGTH):
        value, digit = divmod(value, len(_SORTED_ALPHABET))
        digits.append(_SORTED_ALPHABET[digit])
    return "".join(reversed(digits))


def new_tokens(count: int, length: int) -> list[str]:
    """``count`` distinct random tokens of ``length`` characters of :data:`TOKEN_ALPHABET`, from one
    :func:`secrets.token_bytes` draw for all of them (a few more when bytes are dropped).

    >>> tokens = new_tokens(3, LONG_TOKEN_LENGTH)
    >>> len(set(tokens)), {len(t) for t in tokens}, all(c in TOKEN_ALPHABET for t in tokens for c in t)
    (3, {12}, True)
    """
    need = count * length
    text = b""
    while len(text) < need:
        missing = need - len(text)
        text += secrets.token_bytes(missing + missing // 16 + 8).translate(_BYTE_TO_CHAR, _DROPPED)
    chars = text[:need].decode("ascii")
    tokens = list(dict.fromkeys(chars[i:i + length] for i in range(0, need, length)))
    while len(tokens) < count:  # the same token twice (astronomically rare): draw the missing ones
        tokens = list(dict.fromkeys([*tokens, *new_tokens(count - len(tokens), length)]))
    return tokens


_LINK_COLUMNS = "token, kind, message_id, account, recipient, url, html, created_at"
_INSERT_LINK = f"INSERT INTO links({_LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


class NewLinks:
    """The links one send request makes (unsubscribe, landing, short, pixel), stored with its messages in
    one transaction (:meth:`store`, inside the caller's ``with db:``): a request that fails stores none.

    Tokens come from :func:`new_tokens` in blocks, so a request of 1,000 messages draws its randomness a few
    times, not a thousand; the rows are inserted with one ``executemany``. A message refused after some of
    its links were made gives them back with :meth:`discard` (``mark`` before, ``discard(mark)`` after).

        >>> made = NewLinks("http://127.0.0.1:8080/", "2026-11-21T09:30:00+00:00")
        >>> link = made.unsubscribe("m1", account="demo", recipient="447700900123")
        >>> link[:24], len(link) - 24, len(made.rows)
        ('http://127.0.0.1:8080/u/', 12, 1)
    """

    def __init__(self, public_url: str, created_at: str) -> None:
        self.base = str(public_url).rstrip("/")
        self.created_at = created_at
        self.rows: list[tuple[Any, ...]] = []
        self._short: dict[tuple[str, str], str] = {}  # (message id, URL) -> link: a URL once per message
        self._pool: dict[int, list[str]] = {}  # length -> tokens drawn and not yet used
        self._drawn: set[str] = set()  # every token drawn for this request: none is handed out twice
        self._block = 16
        self._time_prefix = time_prefix()

    def _token(self, length: int) -> str:
        pool = self._pool.setdefault(length, [])
        if not pool:
            if length == LONG_TOKEN_LENGTH:
                drawn = [self._time_prefix + t for t in new_tokens(self._block, length - TIME_PREFIX_LENGTH)]
            else:
                drawn = new_tokens(self._block, length)
            fresh = [t for t in drawn if t not in self._drawn]
            self._drawn.update(fresh)
            pool.extend(fresh)
            self._block = min(self._block * 4, 4096)
            return self._token(length)
        return pool.pop()

    def _add(self, kind: str, length: int, message_id: str, account: str | None = None,
             recipient: str | None = None, url: str | None = None, page: str | None = None) -> str:
        token = self._token(length)
        self.rows.append((token, kind, message_id, account, recipient, url, page, self.created_at))
        suffix = ".gif" if kind == "pixel" else ""
        return f"{self.base}/{_PREFIX[kind]}/{token}{suffix}"

    def mark(self) -> int:
        """Where the rows end now, for :meth:`discard`."""
        return len(self.rows)

    def discard(self, mark: int) -> None:
        """Forget the links made since ``mark`` (their message was refused)."""
        for row in self.rows[mark:]:
            if row[1] == "short":
                self._short.pop((row[2], row[5]), None)
        del self.rows[mark:]

    def unsubscribe(self, message_id: str, *, account: str, recipient: str) -> str:
        """The unsubscribe page of one message (``/u/`` + 12), for ``recipient`` of ``account``."""
        return self._add("unsubscribe", LONG_TOKEN_LENGTH, message_id, account, recipient_key(recipient))

    def landing(self, message_id: str, page: str) -> str:
        """The landing page ``page`` (HTML) of one message (``/l/`` + 12)."""
        return self._add("landing", LONG_TOKEN_LENGTH, message_id, page=str(page))

    def pixel(self, message_id: str) -> str:
        """The open pixel of one email (``/o/`` + 12 + ``.gif``)."""
        return self._add("pixel", LONG_TOKEN_LENGTH, message_id)

    def short(self, message_id: str, url: str) -> str:
        """The short link (``/s/`` + 8) of ``url`` in one message: the same URL in the same message gives the
        same link. Raises ``InputError`` unless ``url`` is an http/https address."""
        clean = _http_url(url)
        link = self._short.get((message_id, clean))
        if link is None:
            link = self._short[(message_id, clean)] = self._add("short", SHORT_CODE_LENGTH, message_id, url=clean)
        return link

    def store(self, db: sqlite3.Connection) -> dict[str, str]:
        """Insert the rows, inside the caller's transaction. A token another request took meanwhile (62**8
        and 62**12 possibilities: astronomically rare) is replaced by a fresh one; returns ``{old link: new
        link}`` so the caller puts the new link in its texts (landing pages stored here are updated here)."""
        if not self.rows:
            return {}
        before = db.total_changes
        # in token order: the inserts walk the token index once, left to right, instead of jumping about it
        db.executemany(_INSERT_LINK.replace("INSERT", "INSERT OR IGNORE", 1), sorted(self.rows))
        if db.total_changes - before == len(self.rows):
            return {}
        replaced: dict[str, str] = {}
        for row in self.rows:
            if db.execute("SELECT kind, message_id FROM links WHERE token = ?", (row[0],)).fetchone() == row[1:3]:
                continue  # stored: the token is this request's (its message ids are its own, its tokens distinct)
            kind, message_id = row[1], row[2]
            prefix = f"/{_PREFIX[kind]}/"
            for _ in range(8):
                token = new_tokens(1, len(row[0]))[0]  # wholly random: a retry need not keep the index order
                try:
                    db.execute(_INSERT_LINK, (token, *row[1:]))
                except sqlite3.IntegrityError:
                    continue
                break
            else:  # pragma: no cover - 62**8 possibilities, eight times over
                raise RuntimeError("could not find a free link token")
            old, new = f"{self.base}{prefix}{row[0]}", f"{self.base}{prefix}{token}"
            replaced[old] = new
            db.execute("UPDATE links SET html = replace(html, ?, ?) WHERE message_id = ? AND html IS NOT NULL",
                       (old, new, message_id))
        return replaced


def _store(state: Any, kind: str, **columns: Any) -> str:
    """Make one link of ``kind`` and store it at once, in its own transaction."""
    made = NewLinks(_public_url(state), _now_text(state))
    maker = getattr(made, kind)
    link: str = maker(**columns)
    with state.db:
        replaced = made.store(state.db)
    return replaced.get(link, link)


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
    """The short link (``{public_url}/s/`` + 8 characters) that redirects to ``url`` for one message, stored
    at once. A send request makes its links with :class:`NewLinks` instead (stored with its messages).

    The same URL in the same message gives the same link; each message gets its own, so clicks are
    counted per recipient. ``url`` must be an ``http``/``https`` address.

    >>> short_link(state, message_id="m1", url="https://shop.example/sale")  # doctest: +SKIP
    'http://127.0.0.1:8080/s/Xb7Qp2Lm'
    """
    url = _http_url(url)
    token = _existing(
        state, "SELECT token FROM links WHERE kind = 'short' AND message_id = ? AND url = ?", (message_id, url)
    )
    if token is not None:
        return _link(state, "short", token)
    return _store(state, "short", message_id=message_id, url=url)


def unsubscribe_link(state: Any, *, account: str, message_id: str, recipient: str) -> str:
    """The unsubscribe page of one message (``{public_url}/u/`` + 12 characters), for ``{UNSUB_URL}``
    and the email ``[unsubscribe_link]``, stored at once (a send request uses :class:`NewLinks`).

    >>> unsubscribe_link(state, account="demo", message_id="m1", recipient="447700900123")  # doctest: +SKIP
    'http://127.0.0.1:8080/u/k3J9xQ2mPa7Z'
    """
    key = recipient_key(recipient)
    token = _existing(
        state,
        "SELECT token FROM links WHERE kind = 'unsubscribe' AND message_id = ? AND account = ? AND recipient = ?",
        (message_id, account, key),
    )
    if token is not None:
        return _link(state, "unsubscribe", token)
    return _store(state, "unsubscribe", message_id=message_id, account=account, recipient=key)


def landing_link(state: Any, *, message_id: str, html: str) -> str:
    """Store the landing page ``html`` of one message and return its address (``{public_url}/l/`` + 12).

    >>> landing_link(state, message_id="m1", html="<h1>Sale</h1>")  # doctest: +SKIP
    'http://127.0.0.1:8080/l/Pq8Rt1Vw3XyZ'
    """
    return _store(state, "landing", message_id=message_id, page=html)


def open_pixel(state: Any, *, message_id: str) -> str:
    """The address of the open-tracking pixel of one email (``{public_url}/o/`` + 12 + ``.gif``).

    >>> open_pixel(state, message_id="m1")  # doctest: +SKIP
    'http://127.0.0.1:8080/o/Zr4Tq9Wb2Nc1.gif'
    """
    token = _existing(state, "SELECT token FROM links WHERE kind = 'pixel' AND message_id = ?", (message_id,))
    if token is not None:
        return _link(state, "pixel", token)
    return _store(state, "pixel", message_id=message_id)


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
