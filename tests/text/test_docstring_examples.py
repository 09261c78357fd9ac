"""The examples in the text engine's docstrings are run, so they stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["encodings", "parts", "translate", "filters", "templates", "measure"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(f"sendframe.text.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
