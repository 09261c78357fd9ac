"""The public namespace: every name in __all__ resolves, and __all__ is sorted."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import sendframe
from sendframe import errors


def test_all_is_sorted_and_every_name_resolves():
    assert sendframe.__all__ == sorted(sendframe.__all__)
    for name in sendframe.__all__:
        assert getattr(sendframe, name) is not None, name


def test_every_class_of_the_errors_module_is_exported_at_the_top_level():
    classes = [name for name, value in vars(errors).items()
               if isinstance(value, type) and value.__module__ == errors.__name__ and not name.startswith("_")]
    assert "SendframeError" in classes and "SendframeWarning" in classes
    assert sorted(set(classes) - set(sendframe.__all__)) == []
    for name in classes:
        assert getattr(sendframe, name) is getattr(errors, name), name


def test_every_export_is_defined_in_the_module_it_is_said_to_come_from():
    for name, module_name in sendframe._EXPORTS.items():
        assert hasattr(importlib.import_module(module_name), name), f"{module_name} lacks {name}"


def test_importing_sendframe_loads_no_optional_stack():
    optional = ("plotly", "ipywidgets", "starlette", "httpx")
    code = f"import sys, sendframe; print(sorted(m for m in {optional!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_unknown_attribute_raises_attribute_error():
    try:
        sendframe.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_type_checkers_see_every_public_name_from_the_module_that_defines_it() -> None:
    # the lazy __getattr__ hides the names from mypy and IDEs; the TYPE_CHECKING block names them again
    tree = ast.parse(Path(sendframe.__file__).read_text(encoding="utf-8"))
    typed: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for item in node.body:
                assert isinstance(item, ast.ImportFrom)
                for alias in item.names:
                    assert alias.asname == alias.name, f"{alias.name} must be re-exported as itself"
                    typed[alias.name] = item.module
    assert typed == sendframe._EXPORTS
