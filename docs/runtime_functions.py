"""Griffe extension: functions a factory builds when their module is imported are documented as Python sees them.

The one-call ``send_*`` functions are made from the message constructors (``send_sms = _one_call("sms", ...)``), so
their signature and docstring exist only at run time: read from the source, each is an attribute with neither. For
every module-level attribute whose value is a call and whose run-time value is a function built elsewhere (its code
object has another name), the module is inspected and the attribute replaced by the inspected function.

Likewise a dataclass field whose help is its metadata (``Message``'s settings: the CLI and the Composer show the same
text) gets that help as its docstring.
"""

from __future__ import annotations

import dataclasses
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
            for cls in module.classes.values():
                _document_fields(cls, getattr(importlib.import_module(module.path), cls.name, None))


def _document_fields(cls: griffe.Class, runtime: Any) -> None:
    if not dataclasses.is_dataclass(runtime):
        return
    for field in dataclasses.fields(runtime):
        member = cls.members.get(field.name)
        if "help" in field.metadata and member is not None and not member.is_alias and member.docstring is None:
            member.docstring = griffe.Docstring(field.metadata["help"], parent=member)


def _is_built_function(runtime: Any, name: str) -> bool:
    value = getattr(runtime, name, None)
    return inspect.isfunction(value) and value.__code__.co_name != name


def _modules(module: griffe.Module) -> list[griffe.Module]:
    found = [module]
    for member in module.modules.values():
        if not member.is_alias:
            found += _modules(member)
    return found
