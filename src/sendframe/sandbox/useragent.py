"""User-agent parsing for click and open events: ``(is_mobile, browser, os)``.

A thin, cached wrapper over ``ua-parser`` (the maintained port of the uap-core rules). Unknown parts
are ``""``; "mobile" means a phone-sized device (tablets are not mobile), following MDN's advice to
look for ``Mobi`` in the string, refined by the device family uap-core reports.

    >>> parse_user_agent("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0")
    (False, 'Firefox', 'Windows')
"""

from __future__ import annotations

from functools import lru_cache

from ua_parser import parse

__all__ = ["parse_user_agent"]

_TABLETS = ("ipad", "tablet", "kindle", "playbook", "nexus 7", "nexus 9", "nexus 10")
_PHONE_OS = ("windows phone", "blackberry os", "symbian os", "firefox os", "kaios")
_MAX_LENGTH = 1024  # user agents are attacker-controlled; longer strings are cut before parsing


@lru_cache(maxsize=4096)
def parse_user_agent(ua: str) -> tuple[bool, str, str]:
    """``(is_mobile, browser family, OS family)`` of a User-Agent header; ``""`` for what is unknown.

    >>> parse_user_agent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    ...                  "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
    (True, 'Mobile Safari', 'iOS')
    >>> parse_user_agent("")
    (False, '', '')
    """
    ua = (ua or "")[:_MAX_LENGTH]
    if not ua.strip():
        return (False, "", "")
    result = parse(ua)
    browser = result.user_agent.family if result.user_agent else ""
    os_name = result.os.family if result.os else ""
    device = (result.device.family if result.device else "").lower()
    lowered = ua.lower()
    tablet = any(name in device or name in lowered for name in _TABLETS)
    mobile = not tablet and ("mobi" in lowered or device in ("iphone", "ipod") or os_name.lower() in _PHONE_OS)
    return (mobile, "" if browser == "Other" else browser, "" if os_name == "Other" else os_name)
