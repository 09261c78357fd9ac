"""Preview: exactly the text each recipient would receive, before anything is sent.

Variables and filters are applied by the shared text engine (:func:`sendframe.text.templates.render_frame`,
vectorised); the generated parts of a message are shown as placeholders of their real length
(docs/api-notes.md, "Text"):

- ``{OTP_CODE}``: ``0`` repeated ``otpConfig.length`` times (default 4), ``A`` when ``alpha``;
- ``{UNSUB_URL}``: ``{link_base}/u/`` + 12 characters, ``{LAND_URL}``: ``{link_base}/l/`` + 12;
- ``{var|shorten}``: ``{link_base}/s/`` + 8 characters.

Characters the encoding cannot carry are shown as written (see :func:`~sendframe.campaign.estimate.estimate` for
what would be lost). With ``trans=1`` the spec's translation table is applied to the final text.

    >>> import pandas as pd
    >>> render(pd.DataFrame({"name": ["ana"]}), "Hi {name|capitalize}, code {OTP_CODE}").tolist()
    ['Hi Ana, code 0000']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from sendframe.api.models import OtpConfig, parse_body
from sendframe.errors import InputError
from sendframe.options import keyword_checked
from sendframe.text import templates
from sendframe.text.templates import DEFAULT_LINK_BASE, placeholder_links
from sendframe.text.translate import translate_series

__all__ = ["contacts_frame", "placeholders", "render"]


def placeholders(link_base: str | None = None, otp_config: Mapping[str, Any] | OtpConfig | None = None
                 ) -> tuple[dict[str, str], Callable[[str], str]]:
    """The specials placeholders and a ``shorten`` stand-in, each of the real length (the text engine's
    ``placeholder_links`` for this OTP configuration and base: ``link_base``, else ``$SENDFRAME_BASE_URL``,
    else ``DEFAULT_LINK_BASE``, the sandbox's usual address).

        >>> specials, shorten = placeholders("https://s.io", {"length": 6})
        >>> specials["OTP_CODE"], specials["UNSUB_URL"], shorten("https://example.com/long/path")
        ('000000', 'https://s.io/u/xxxxxxxxxxxx', 'https://s.io/s/xxxxxxxx')
    """
    otp = OtpConfig() if otp_config is None else otp_config
    if not isinstance(otp, OtpConfig):  # checked by the model's own rules (length 3-10, ...)
        otp = parse_body(OtpConfig, dict(otp) if isinstance(otp, Mapping) else otp, "otp_config")
    base = (link_base or os.environ.get("SENDFRAME_BASE_URL") or DEFAULT_LINK_BASE).rstrip("/")
    return placeholder_links(base, otp_length=otp.length, otp_alpha=otp.alpha)


def contacts_frame(contacts: object) -> pd.DataFrame:
    """``contacts`` when it is a pandas frame, else an error saying how to make one (what render, estimate and
    preflight take).

        >>> contacts_frame([1])
        Traceback (most recent call last):
        ...
        sendframe.errors.InputError: contacts must be a pandas DataFrame (see sendframe.read_contacts; a Dask frame \
goes through the Message's methods), not builtins.list.
    """
    if not isinstance(contacts, pd.DataFrame):
        kind = type(contacts)
        raise InputError("contacts must be a pandas DataFrame (see sendframe.read_contacts; a Dask frame goes through "
                         f"the Message's methods), not {kind.__module__.split('.')[0]}.{kind.__name__}.")
    return contacts


@keyword_checked
def render(
    contacts: pd.DataFrame,
    template: str,
    *,
    channel: str = "sms",
    otp_config: Mapping[str, Any] | None = None,
    link_base: str | None = None,
    trans: int = 0,
    escape_html: bool = False,
) -> pd.Series:
    """The text each recipient would receive, as a ``str`` Series named ``text`` on the contacts' index.

    A row missing a variable the template needs has no text (NaN; preflight names the variable).
    ``channel`` is accepted for symmetry with ``estimate``; every channel renders the same way.
    ``escape_html``: the template is HTML (a landing page, an email's subject or body), so every value
    is HTML-escaped as the service does (:attr:`sendframe.channels.ChannelInfo.html_fields`).
    The contacts frame is not modified.

        >>> import pandas as pd
        >>> render(pd.DataFrame({"n": ["Jo", None]}), "Hi {n|upper} {UNSUB_URL}", link_base="https://a.b").tolist()
        ['Hi JO https://a.b/u/xxxxxxxxxxxx', nan]
    """

    frame = contacts_frame(contacts)
    if not isinstance(template, str):
        raise InputError(f"The template must be text, not {type(template).__name__}.")
    if trans not in (0, 1):
        raise InputError(f"trans must be 0 or 1 (got {trans!r}).")
    templates.parse(template)  # an unknown filter raises TemplateError before any work
    specials, shorten = placeholders(link_base, otp_config)
    text = templates.render_frame(frame, template, specials=specials, shorten=shorten, escape_html=escape_html)
    text = translate_series(text) if trans == 1 else text
    return pd.Series(text, index=frame.index, name="text").astype("str")
