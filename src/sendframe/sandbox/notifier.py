"""Outbound delivery notifications: one GET per attempt, with the policy of docs/api-notes.md.

Timeout 5 s, no redirects followed, at most 64 KiB of the answer read, at most 512 in flight, and
only to destinations that pass :meth:`Notifier.check_destination`: link-local and cloud-metadata
addresses are always refused; loopback only when ``allow_loopback``; private ranges (and any other
special range) only when ``allow_networks`` names them. The address checked is the address
connected to (the request is pinned to it), so a name cannot resolve to a public address for the
check and to a private one for the request.

Sent by :mod:`sendframe.sandbox.outbound`, a lean HTTP/1.1 keep-alive client on asyncio protocols,
through :meth:`Notifier.deliver_many`: a batch (the worker's round) judges each destination once,
spreads its requests over a few keep-alive connections (pipelined once the server keeps them alive)
and needs no task per request. aiohttp cost about 120 us of CPU per notification (a task, an
``asyncio.timeout`` and a request object each; 6,100/s to ``sendframe receive``), this client about
7 us (24,000/s; 45,000/s to a bare server): ``benchmarks/bench_notifier.py``. No well-kept library
offers a batch of GETs without a task per request (httpx's async client reached about 450/s here).
Retrying (after :data:`RETRY_DELAYS`) is the worker's job: it is durable, this module is not.

    >>> import asyncio
    >>> async def demo():
    ...     notifier = Notifier(allow_loopback=False)
    ...     try:
    ...         return await notifier.deliver("http://169.254.169.254/latest/meta-data/")
    ...     finally:
    ...         await notifier.aclose()
    >>> asyncio.run(demo()).ok
    False
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import ssl
import time
from collections.abc import Iterable, Sequence
from typing import Any, cast
from urllib.parse import SplitResult, quote, urlsplit

from sendframe.sandbox.outbound import Attempt, Batch, Dispatcher

__all__ = [
    "Attempt",
    "Notifier",
    "MAX_IN_FLIGHT",
    "RETRY_DELAYS",
]

log = logging.getLogger(__name__)

RETRY_DELAYS: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
# unanswered requests at most, over at most 16 keep-alive connections per destination (32 pipelined on each): a
# receiver's group commit then takes more per fsync. 32 (8 per connection) drained a sandbox's backlog into
# ``sendframe receive`` at 15-17k/s, 20 us of receiver CPU each; 128 (4 connections) at 23-25k/s, 8-10 us; 256 at
# 25-27k/s but 64 deep, a slow server (0.1 s an answer) would time out the last; 512 on 16 connections (still 32
# deep) took the notifier process's backlog at 1.6x the rate of 128 on a loaded machine, 6 us of receiver CPU
# each (benchmarks/bench_notifier.py --drain).
MAX_IN_FLIGHT = 512
DNS_CACHE_SECONDS = 10.0
USER_AGENT = "sendframe-sandbox-notifier/1"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# one answer of getaddrinfo: (family, type, proto, canonname, sockaddr); sockaddr[0] is the address text
AddrInfo = tuple[socket.AddressFamily, socket.SocketKind, int, str, tuple[Any, ...]]

_METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
                             "instance-data.ec2.internal"})
_METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "168.63.129.16"))
_LINK_LOCAL = tuple(ipaddress.ip_network(n) for n in ("169.254.0.0/16", "fe80::/10"))
_LOOPBACK = tuple(ipaddress.ip_network(n) for n in ("127.0.0.0/8", "::1/128"))
_PRIVATE = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7", "64:ff9b:1::/48"))


class _Unresolved(str):
    """Why a host has no address (a DNS failure): not the policy's refusal, so worth retrying."""


def _parse_networks(networks: Iterable[str]) -> tuple[IPNetwork, ...]:
    parsed = []
    for text in networks:
        try:
            parsed.append(ipaddress.ip_network(str(text).strip(), strict=False))
        except ValueError:
            raise ValueError(f"allow_networks: {text!r} is not a network in CIDR form such as 10.0.0.0/8.") from None
    return tuple(parsed)


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _plain(address: IPAddress) -> IPAddress:
    """An IPv6 address that carries an IPv4 address, judged as that IPv4 address: IPv4-mapped
    (``::ffff:10.0.0.1``), IPv4-compatible (``::10.0.0.1``), 6to4 (``2002:a9fe:a9fe::``, 2002::/16) and
    NAT64 (``64:ff9b::a9fe:a9fe``, 64:ff9b::/96). Anything else is judged as it is.

        >>> str(_plain(ipaddress.ip_address("2002:a9fe:a9fe::"))), str(_plain(ipaddress.ip_address("64:ff9b::7f00:1")))
        ('169.254.169.254', '127.0.0.1')
    """
    if not isinstance(address, ipaddress.IPv6Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    number = int(address)
    if address in _NAT64 or (number >> 32 == 0 and number > 1):  # NAT64, or IPv4-compatible (not :: or ::1)
        return ipaddress.IPv4Address(number & 0xFFFFFFFF)
    return address


class Notifier:
    """Sends delivery notifications (HTTP GET) under the outbound policy.

    >>> notifier = Notifier(allow_loopback=True)
    >>> notifier.check_destination("http://127.0.0.1:8000/dlr?id=%i") is None
    True
    >>> notifier.check_destination("ftp://example.com/")
    'only http and https addresses are allowed'
    """

    def __init__(self, *, allow_loopback: bool, allow_networks: Iterable[str] = (), timeout: float = 5.0,
                 max_in_flight: int = MAX_IN_FLIGHT, max_body: int = 65536) -> None:
        if max_in_flight < 1 or max_body < 0 or timeout <= 0:
            raise ValueError("Notifier needs max_in_flight >= 1, max_body >= 0 and a positive timeout.")
        self.allow_loopback = allow_loopback
        self.allow_networks = _parse_networks(allow_networks)
        self.timeout = timeout
        self.max_in_flight = max_in_flight
        self.max_body = max_body
        self._dispatcher: Dispatcher | None = None
        self._ssl: ssl.SSLContext | None = None
        self._origins: dict[str, tuple[str, SplitResult | None]] = {}
        self._dns: dict[tuple[str, int], tuple[float, tuple[IPAddress, ...] | str]] = {}

    def __repr__(self) -> str:
        return (f"Notifier(allow_loopback={self.allow_loopback}, "
                f"allow_networks={[str(n) for n in self.allow_networks]},"
                f" timeout={self.timeout}, max_in_flight={self.max_in_flight}, max_body={self.max_body})")

    # ------------------------------------------------------------------------ destinations
    def _address_refused(self, given: IPAddress) -> str | None:
        address = _plain(given)
        shown = str(address) if address is given else f"{given} (which carries {address})"
        if address in _METADATA_ADDRESSES:
            return f"{shown} is a cloud metadata address"
        if any(address in net for net in _LINK_LOCAL):
            return f"{shown} is a link-local address"
        if address.is_unspecified or address.is_multicast:
            return f"{shown} is not a unicast address"
        if any(address in net for net in self.allow_networks):
            return None
        if any(address in net for net in _LOOPBACK):
            return None if self.allow_loopback else f"{shown} is a loopback address"
        if any(address in net for net in _PRIVATE) or address.is_private or address.is_reserved:
            return f"{shown} is a private address (allow it with --allow-callback-network)"
        return None

    def _url_refused(self, url: str) -> tuple[str | None, SplitResult | None]:
        try:
            parsed = urlsplit(url)
            parsed.port  # noqa: B018 - raises ValueError for a port that is not a number
        except (TypeError, ValueError, AttributeError):
            return "not a valid URL", None
        if parsed.scheme not in ("http", "https"):
            return "only http and https addresses are allowed", None
        if not parsed.hostname:
            return "the address has no host", None
        if parsed.username is not None or parsed.password is not None:
            return "addresses with credentials (user:password@) are not allowed", None
        if parsed.hostname.rstrip(".") in _METADATA_NAMES:
            return "cloud metadata host names are not allowed", None
        return None, parsed

    def _judge(self, addresses: tuple[IPAddress, ...] | str) -> str | None:
        if isinstance(addresses, str):
            return addresses
        for address in addresses:
            reason = self._address_refused(address)
            if reason:
                return reason
        return None

    def _cached(self, host: str, port: int) -> tuple[IPAddress, ...] | str | None:
        hit = self._dns.get((host, port))
        if hit and hit[0] > time.monotonic():
            return hit[1]
        return None

    def _remember(self, host: str, port: int, infos: Sequence[AddrInfo] | str) -> tuple[IPAddress, ...] | str:
        if isinstance(infos, str):
            result: tuple[IPAddress, ...] | str = _Unresolved(infos)
        else:
            result = tuple(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos))
            result = result or _Unresolved(f"the host {host} has no address")
        if len(self._dns) > 4096:
            self._dns.clear()
        self._dns[(host, port)] = (time.monotonic() + DNS_CACHE_SECONDS, result)
        return result

    @staticmethod
    def _literal(host: str) -> tuple[IPAddress, ...] | None:
        try:
            return (ipaddress.ip_address(host),)
        except ValueError:
            return None

    def check_destination(self, url: str) -> str | None:
        """Why ``url`` may not be notified (plain English), or None when it may. Resolves the host (blocking).

        >>> Notifier(allow_loopback=False).check_destination("http://10.1.2.3/dlr")
        '10.1.2.3 is a private address (allow it with --allow-callback-network)'
        """
        reason, parsed = self._url_refused(url)
        if reason or parsed is None:
            return reason
        host, port = parsed.hostname or "", _port(parsed)
        addresses = self._literal(host) or self._cached(host, port)
        if addresses is None:
            try:
                infos: Sequence[AddrInfo] | str = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError):
                infos = f"cannot resolve the host {host}"
            addresses = self._remember(host, port, infos)
        return self._judge(addresses)

    async def resolve_checked(self, host: str, port: int) -> tuple[IPAddress, ...] | str:
        """The addresses of ``host`` that may be connected to, or why none may (cached briefly)."""
        addresses = self._literal(host) or self._cached(host, port)
        if addresses is None:
            try:
                loop = asyncio.get_running_loop()
                infos: Sequence[AddrInfo] | str = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError):
                infos = f"cannot resolve the host {host}"
            addresses = self._remember(host, port, infos)
        return self._judge(addresses) or addresses

    # ---------------------------------------------------------------------------- sending
    def _origin(self, origin: str) -> tuple[str, SplitResult | None]:
        """The policy's verdict on an address's ``scheme://authority`` (cached: a campaign has few)."""
        known = self._origins.get(origin)
        if known is None:
            reason, parsed = self._url_refused(origin + "/")
            if len(self._origins) >= 4096:
                self._origins.clear()
            known = self._origins[origin] = (reason or "", parsed)
        return known

    def _dispatcher_for_loop(self) -> Dispatcher:
        loop = asyncio.get_running_loop()
        if self._dispatcher is None or self._dispatcher.loop is not loop:
            self._dispatcher = Dispatcher(loop, max_in_flight=self.max_in_flight, timeout=self.timeout,
                                          max_body=self.max_body)
        return self._dispatcher

    async def deliver(self, url: str) -> Attempt:
        """One GET to ``url`` (escape codes already substituted); never raises for network trouble.

        Only a 2xx answer is ``ok``; a redirect is not followed (and not ok); at most ``max_body``
        bytes of the answer are read.
        """
        return (await self.deliver_many([url]))[0]

    async def deliver_many(self, urls: Sequence[str]) -> list[Attempt]:
        """One GET to each of ``urls``, the attempts in the same order; never raises for network trouble.

        Each destination (scheme, host, port) is judged once for the batch; its requests share a few
        keep-alive connections to the checked addresses (pipelined once the server keeps them alive),
        at most ``max_in_flight`` unanswered at a time across the notifier.

            >>> async def demo():
            ...     notifier = Notifier(allow_loopback=False)
            ...     attempts = await notifier.deliver_many(["http://10.0.0.1/dlr", "gopher://x/"])
            ...     await notifier.aclose()
            ...     return [a.refused for a in attempts]
            >>> asyncio.run(demo())
            [True, True]
        """
        dispatcher = self._dispatcher_for_loop()
        batch = Batch(len(urls), dispatcher.loop)
        groups: dict[str, list[tuple[int, str]]] = {}
        origin, cut = "", 0  # the last URL's origin and its length: a batch's URLs mostly share one
        group: list[tuple[int, str]] = []
        for index, url in enumerate(urls):
            # the same origin as the last URL's, ended where the regular expression would end it
            if cut and isinstance(url, str) and url.startswith(origin) and url[cut:cut + 1] in "/?":
                target = url[cut:]
                group.append((index, target.partition("#")[0] if "#" in target else target))
                continue
            split = _SPLIT.match(url) if isinstance(url, str) else None
            if split is None:  # something unusual: the general parser decides, and says why not
                reason, parsed = self._url_refused(url)
                if reason or parsed is None:
                    batch.done(index, Attempt(False, None, f"refused: {reason}", refused=True))
                    continue
                origin, target = f"{parsed.scheme}://{parsed.netloc}", parsed.path + ("?" + parsed.query
                                                                                         if parsed.query else "")
            else:
                origin, target = split.group(1), split.group(2)
            group = groups.setdefault(origin, [])
            group.append((index, target))
            cut = len(origin) if split is not None else 0
        for origin, group in groups.items():
            reason, parsed = self._origin(origin)
            if reason or parsed is None:
                refused = Attempt(False, None, f"refused: {reason}", refused=True)
                for index, _ in group:
                    batch.done(index, refused)
                continue
            host, port = parsed.hostname or "", _port(parsed)
            checked = await self.resolve_checked(host, port)
            if isinstance(checked, str):
                failure = (Attempt(False, None, str(checked)) if isinstance(checked, _Unresolved)
                           else Attempt(False, None, f"refused: {checked}", refused=True))
                for index, _ in group:
                    batch.done(index, failure)
                continue
            secure = parsed.scheme == "https"
            addresses = tuple(str(address) for address in checked)
            destination = dispatcher.destination((secure, host, port, addresses), host, port, addresses,
                                                 self._ssl_context() if secure else None)
            suffix = (f" HTTP/1.1\r\nHost: {_host_header(parsed)}\r\nUser-Agent: {USER_AGENT}\r\n"
                      "Accept: */*\r\n\r\n").encode("ascii")
            dispatcher.submit(destination, [(batch, index, b"GET %s%s" % (_request_target(target), suffix))
                                            for index, target in group])
        if batch.remaining:
            try:
                await batch.future
            except asyncio.CancelledError:
                batch.cancelled = True
                raise
        return cast(list[Attempt], batch.results)

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    async def aclose(self) -> None:
        """Close every connection."""
        if self._dispatcher is not None and self._dispatcher.loop is asyncio.get_running_loop():
            await self._dispatcher.close()
        self._dispatcher = None


# scheme://authority, then the request target (path and query, up to a fragment); no space or control character
_SPLIT = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^/?#\x00-\x20\x7f-\uffff]*)([^#]*)")
_TARGET_SAFE = "-._~:/?[]@!$&'()*+,;=%"
_TARGET_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + _TARGET_SAFE.encode("ascii")


def _request_target(target: str) -> bytes:
    """The path and query as sent: ``/`` when empty; characters a request line may not hold percent-encoded.

        >>> _request_target("?t=2026-11-21 09:30&n=caf\u00e9")
        b'/?t=2026-11-21%2009:30&n=caf%C3%A9'
    """
    if not target.startswith("/"):
        target = "/" + target
    if target.isascii():
        encoded = target.encode("ascii")
        if not encoded.translate(None, _TARGET_BYTES):  # every character allowed (one C pass: this runs per request)
            return encoded
    return quote(target, safe=_TARGET_SAFE).encode("ascii")


def _host_header(parsed: SplitResult) -> str:
    if parsed.netloc.isascii():
        return parsed.netloc
    host = (parsed.hostname or "").encode("idna").decode("ascii")
    return f"{host}:{parsed.port}" if parsed.port else host


def _port(parsed: SplitResult) -> int:
    return parsed.port or (443 if parsed.scheme == "https" else 80)
