"""Fixtures shared across the test folders."""

from __future__ import annotations

import pytest

from sendframe.api.retry import RetryPolicy
from sendframe.sandbox import Sandbox

# retries with tiny delays, so fault-injection tests stay fast
FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def sb():
    """A real sandbox on a free loopback port, shared by the tests of one module."""
    with Sandbox() as running:
        yield running
