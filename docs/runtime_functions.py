"""Griffe extension: functions a factory builds when their module is imported are documented as Python sees them.

The one-call ``send_*`` functions are made from the message constructors (``send_sms = _one_call("sms", ...)``), so
their signature and docstring exist only at run time: read from the source, each is an attribute with neither. For
every module-level attribute whose value is a call and whose run-time value is a function built elsewhere (its code
object has another name), the module is inspected and the attribute replaced by the inspected function.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe

PACKAGE = "sendframe"


class RuntimeFunctions(griffe.Extension):
    """Replaces factory-built functions of the sendframe package by their inspected selves, once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.name != PACKAGE:
            return
        for module in _modules(pkg):
            built = [name for name, member in module.members.items()
                     if isinstance(member, griffe.Attribute) and isinstance(member.value, griffe.ExprCall)
                     and _is_built_function(importlib.import_module(module.path), name)]
            if built:
                inspected = griffe.inspect(module.path)
                for name in built:
                    module.set_member(name, inspected[name])


def _is_built_function(runtime: Any, name: str) -> bool:
    value = getattr(runtime, name, None)
    return inspect.isfunction(value) and value.__code__.co_name != name


def _modules(module: griffe.Module) -> list[griffe.Module]:
    found = [module]
    for member in module.modules.values():
        if not member.is_alias:
            found += _modules(member)
    return found
