"""Repository-wide pytest settings (tests/conftest.py holds the test fixtures)."""

from __future__ import annotations

import doctest

import pytest
from _pytest.doctest import DoctestItem


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A docstring whose every example is marked ``+SKIP`` (it needs a live service, a file or a
    notebook) is documentation, not a test: deselect it rather than report it as skipped."""
    illustrative = [item for item in items if isinstance(item, DoctestItem)
                    and all(example.options.get(doctest.SKIP) for example in item.dtest.examples)]
    if illustrative:
        config.hook.pytest_deselected(items=illustrative)
        dropped = set(illustrative)
        items[:] = [item for item in items if item not in dropped]
