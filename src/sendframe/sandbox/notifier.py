"""Outbound delivery notifications: one GET per attempt, with the policy of docs/api-notes.md.

Timeout 5 s, no redirects followed, at most 64 KiB of the answer read, at most 32 in flight, and
only to destinations that pass :meth:`Notifier.check_destination`: link-local and cloud-metadata
addresses are always refused; loopback only when ``allow_loopback``; private ranges (and any other
special range) only when ``allow_networks`` names them. The address checked is the address
connected to (the request is pinned to it), so a name cannot resolve to a public address for the
check and to a private one for the request. Sent with aiohttp: httpx's async client reached only
about 450 notifications/s on this 2-core machine, aiohttp about 3,500 (benchmarks/bench_notifier.py).
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
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

__all__ = [
    "Attempt",
    "Notifier",
    "RETRY_DELAYS",
]

log = logging.getLogger(__name__)

RETRY_DELAYS: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
DNS_CACHE_SECONDS = 10.0

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


@dataclass(frozen=True)
class Attempt:
    """The result of one notification attempt: ``ok`` is a 2xx answer; ``error`` says why not; ``refused``
    means the outbound policy refuses the destination, so retrying cannot help (the worker gives up at once)."""

    ok: bool
    status: int | None
    error: str | None
    refused: bool = False


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
                 max_in_flight: int = 32, max_body: int = 65536) -> None:
        if max_in_flight < 1 or max_body < 0 or timeout <= 0:
            raise ValueError("Notifier needs max_in_flight >= 1, max_body >= 0 and a positive timeout.")
        self.allow_loopback = allow_loopback
        self.allow_networks = _parse_networks(allow_networks)
        self.timeout = timeout
        self.max_in_flight = max_in_flight
        self.max_body = max_body
        self._session: aiohttp.ClientSession | None = None
        self._semaphore = asyncio.Semaphore(max_in_flight)
        self._loop: asyncio.AbstractEventLoop | None = None
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
    def _session_for_loop(self) -> tuple[aiohttp.ClientSession, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self.max_in_flight, use_dns_cache=False,
                                             resolver=_CheckedResolver(self))
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=self.timeout),
                headers={"User-Agent": "sendframe-sandbox-notifier/1"}, trust_env=False, auto_decompress=False)
            self._semaphore = asyncio.Semaphore(self.max_in_flight)
            self._loop = loop
        return self._session, self._semaphore

    async def deliver(self, url: str) -> Attempt:
        """One GET to ``url`` (escape codes already substituted); never raises for network trouble.

        Only a 2xx answer is ``ok``; a redirect is not followed (and not ok); at most ``max_body``
        bytes of the answer are read.
        """
        reason, parsed = self._url_refused(url)
        if reason or parsed is None:
            return Attempt(False, None, f"refused: {reason}", refused=True)
        session, semaphore = self._session_for_loop()
        async with semaphore:
            checked = await self.resolve_checked(parsed.hostname or "", _port(parsed))
            if isinstance(checked, _Unresolved):
                return Attempt(False, None, str(checked))
            if isinstance(checked, str):
                return Attempt(False, None, f"refused: {checked}", refused=True)
            try:
                async with asyncio.timeout(self.timeout):
                    async with session.get(url, allow_redirects=False) as response:
                        status = response.status
                        read = 0
                        while read < self.max_body:
                            chunk = await response.content.read(self.max_body - read)
                            if not chunk:
                                break
                            read += len(chunk)
                        if not response.content.at_eof():
                            response.close()  # stop reading: drop the connection instead of draining it
            except TimeoutError:
                return Attempt(False, None, f"timed out after {self.timeout:g} s")
            except _Refused as refused:
                return Attempt(False, None, f"refused: {refused}", refused=True)
            except (aiohttp.ClientError, OSError) as error:
                return Attempt(False, None, f"connection failed: {type(error).__name__}")
        if 200 <= status < 300:
            return Attempt(True, status, None)
        if 300 <= status < 400:
            return Attempt(False, status, f"answered {status} (redirects are not followed)")
        return Attempt(False, status, f"answered {status}")

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._session is not None and not self._session.closed and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None


class _Refused(OSError):
    """A destination refused by the policy while connecting (the connector's resolver says why)."""


class _CheckedResolver(AbstractResolver):
    """Gives the connector only the addresses the policy allows, so the checked address is the one used."""

    def __init__(self, notifier: Notifier) -> None:
        self._notifier = notifier

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        checked = await self._notifier.resolve_checked(host, port)
        if isinstance(checked, _Unresolved):
            raise OSError(str(checked))
        if isinstance(checked, str):
            raise _Refused(checked)
        return [ResolveResult(hostname=host, host=str(a), port=port,
                              family=socket.AF_INET6 if a.version == 6 else socket.AF_INET,
                              proto=0, flags=socket.AI_NUMERICHOST) for a in checked]

    async def close(self) -> None:
        return None


def _port(parsed: SplitResult) -> int:
    return parsed.port or (443 if parsed.scheme == "https" else 80)
