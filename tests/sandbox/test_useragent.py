"""parse_user_agent: (is_mobile, browser, os) from real-world User-Agent strings."""

from __future__ import annotations

import pytest

from sendframe.sandbox.useragent import parse_user_agent

IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
                 "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
ANDROID_CHROME = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/124.0.0.0 Mobile Safari/537.36")
WINDOWS_FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0"
IPAD_SAFARI = ("Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
               "Version/17.4 Mobile/15E148 Safari/604.1")
ANDROID_TABLET = ("Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/124.0.0.0 Safari/537.36")
MAC_SAFARI = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
              "Version/17.4 Safari/605.1.15")


def test_iphone_safari_is_mobile_safari_on_ios():
    assert parse_user_agent(IPHONE_SAFARI) == (True, "Mobile Safari", "iOS")


def test_android_chrome_is_mobile_chrome_on_android():
    assert parse_user_agent(ANDROID_CHROME) == (True, "Chrome Mobile", "Android")


def test_windows_firefox_is_desktop_firefox_on_windows():
    assert parse_user_agent(WINDOWS_FIREFOX) == (False, "Firefox", "Windows")


def test_mac_safari_is_desktop():
    assert parse_user_agent(MAC_SAFARI) == (False, "Safari", "Mac OS X")


@pytest.mark.parametrize("ua", [IPAD_SAFARI, ANDROID_TABLET])
def test_tablets_are_not_counted_as_mobile(ua):
    is_mobile, browser, os_name = parse_user_agent(ua)
    assert not is_mobile
    assert browser and os_name in ("iOS", "Android")


@pytest.mark.parametrize("ua", ["", "   ", "garbage", "\x00\x01 ??"])
def test_unknown_user_agents_give_empty_browser_and_os(ua):
    assert parse_user_agent(ua) == (False, "", "")


def test_an_enormous_user_agent_is_parsed_without_error():
    is_mobile, browser, _ = parse_user_agent(WINDOWS_FIREFOX + " x" * 100_000)
    assert browser == "Firefox" and not is_mobile
