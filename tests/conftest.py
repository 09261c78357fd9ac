"""Fixtures shared across the test folders."""

from __future__ import annotations

import pytest

from sendframe.api.client import Client
from sendframe.api.retry import RetryPolicy
from sendframe.sandbox import Sandbox

# retries with tiny delays, so fault-injection tests stay fast
FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def sb():
    """A real sandbox on a free loopback port, shared by the tests of one module."""
    with Sandbox() as running:
        yield running


@pytest.fixture
def client(sb):
    """A Client of ``sb`` with fast retries; faults injected by the test are cleared before and after."""
    sb.clear_faults()
    with Client(sb.base_url, sb.username, sb.api_password, retry=FAST_RETRY) as c:
        yield c
    sb.clear_faults()
