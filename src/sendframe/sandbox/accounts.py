"""Sandbox accounts: credentials, registered IPs, enabled channels, validated senders, templates.

No HTTP here: :func:`check_credentials` and friends answer plain questions; the app turns their
answers into 401 / 403 error objects.

    >>> account = parse_account_spec("shop:s3cret:sms,mailing")
    >>> account.username, sorted(account.channels)
    ('shop', ['mailing', 'sms'])
    >>> account
    Account(username='shop', channels=['mailing', 'sms'])
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sendframe.channels import CHANNELS, channel_name
from sendframe.errors import ConfigurationError, InputError

__all__ = [
    "ALL_CHANNELS",
    "Account",
    "DEMO_ACCOUNT",
    "EMAIL_TEMPLATES",
    "LANDING_TEMPLATES",
    "LOOPBACK_IPS",
    "build_accounts",
    "check_credentials",
    "parse_account_spec",
]

ALL_CHANNELS: frozenset[str] = frozenset(CHANNELS)
LOOPBACK_IPS: frozenset[str] = frozenset({"127.0.0.1", "::1"})

# Built-in email templates (body HTML); (generation, id) -> body. {name} variables are personalised.
EMAIL_TEMPLATES: dict[tuple[str, int], str] = {
    ("templateId", 1): "<html><body><p>Hello {name}, this is our legacy newsletter.</p>"
    '<p><a href="[unsubscribe_link]">Unsubscribe</a></p></body></html>',
    ("templateV2Id", 1): "<html><body><h1>Hello {name}</h1><p>News from the shop.</p>"
    '<p><a href="https://example.org/offers">See the offers</a></p>'
    '<p><a href="[unsubscribe_link]">Unsubscribe</a></p></body></html>',
}

# Built-in landing page templates (HTML).
LANDING_TEMPLATES: dict[tuple[str, int], str] = {
    ("templateId", 1): "<html><body><h1>Hello {name}</h1><p>Legacy landing page.</p></body></html>",
    ("templateV2Id", 1): "<html><body><h1>Hello {name}</h1><p>Your offer is waiting for you.</p></body></html>",
}


@dataclass(frozen=True)
class Account:
    """One API account of the sandbox. The password never appears in ``repr``."""

    username: str
    api_password: str = field(repr=False)
    channels: frozenset[str] = frozenset({"sms"})
    ips: frozenset[str] = LOOPBACK_IPS
    emails: frozenset[str] = frozenset()
    whatsapp_senders: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"Account(username={self.username!r}, channels={sorted(self.channels)!r})"

    def allows(self, channel: str) -> bool:
        """Whether ``channel`` is enabled for this account.

            >>> DEMO_ACCOUNT.allows("whatsapp")
            True
        """
        return channel in self.channels


DEMO_ACCOUNT = Account(
    username="demo",
    api_password="demo-password",
    channels=ALL_CHANNELS,
    emails=frozenset({"news@example.org"}),
    whatsapp_senders=frozenset({"34911111111"}),
)


def parse_account_spec(spec: str, ips: Iterable[str] = ()) -> Account:
    """Read ``USER:PASSWORD[:CHANNEL,...]`` (the ``--account`` flag) into an :class:`Account`.

    Without channels only ``sms`` is enabled. Loopback addresses are always registered; ``ips`` adds others.

        >>> parse_account_spec("ana:pw").channels
        frozenset({'sms'})
    """
    username, sep, rest = spec.partition(":")
    if not username or not sep or not rest:
        raise ConfigurationError("--account must be USER:PASSWORD[:CHANNEL,...] "
                                 f"(got an account for {username or '?'!r} without a password)")
    password, _, channel_text = rest.partition(":")
    if not password:
        raise ConfigurationError(f"--account for {username!r}: the password must not be empty")
    channels = {"sms"}
    for raw in filter(None, (c.strip() for c in channel_text.split(","))):
        try:
            channels.add(channel_name(raw))
        except InputError:
            raise ConfigurationError(f"--account for {username!r}: unknown channel {raw!r}; "
                                     f"use one of {', '.join(sorted(ALL_CHANNELS))}") from None
    return Account(username=username, api_password=password, channels=frozenset(channels),
                   ips=LOOPBACK_IPS | frozenset(ips))


def build_accounts(extra: Iterable[Account | str] = (), ips: Iterable[str] = ()) -> dict[str, Account]:
    """The built-in ``demo`` account plus ``extra`` ones (``Account`` objects or ``USER:PASSWORD[:CHANNELS]`` specs).

        >>> sorted(build_accounts(["ana:pw"]))
        ['ana', 'demo']
    """
    ip_list = list(ips)
    accounts = {DEMO_ACCOUNT.username: DEMO_ACCOUNT}
    if ip_list:
        accounts["demo"] = Account(**{**DEMO_ACCOUNT.__dict__, "ips": DEMO_ACCOUNT.ips | frozenset(ip_list)})
    for item in extra:
        account = parse_account_spec(item, ip_list) if isinstance(item, str) else item
        accounts[account.username] = account
    return accounts


def check_credentials(accounts: Mapping[str, Account], username: str, password: str) -> Account | None:
    """The account whose username and API password match, compared in constant time; else ``None``.

        >>> check_credentials(build_accounts(), "demo", "demo-password").username
        'demo'
        >>> check_credentials(build_accounts(), "demo", "wrong") is None
        True
    """
    account = accounts.get(username)
    expected = account.api_password if account else "\0" * max(len(password), 1)
    matches = hmac.compare_digest(expected.encode("utf-8"), password.encode("utf-8"))
    return account if account is not None and matches else None
