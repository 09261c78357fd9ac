"""Griffe extension: sendframe's docstrings, written for ``help()`` and doctest, shown as Markdown.

The docstrings stay as they are (prose, ``literal`` reST markup, indented doctest examples); when the reference site
is built, each one is rewritten in memory:

- a doctest example becomes a fenced ``pycon`` block (its ``# doctest:`` directives dropped: they are for the tests);
- a ``<`` in prose is a character, not the start of an HTML tag;
- a reST role (``:func:`estimate_totals```, ``:meth:`~sendframe.Message.send```) becomes a cross-reference to the
  object it names, resolved the way Python resolves the name where the docstring is written (the object, its
  parents, their imports). It links where that object has a page and reads as code where it has none (a private
  helper). A role naming nothing that exists is a warning, so ``mkdocs build --strict`` fails on it.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import griffe

# mkdocs counts the warnings of the loggers under "mkdocs" (a warning fails `mkdocs build --strict`)
log = logging.getLogger("mkdocs.plugins.sendframe.rst_docstrings")

PACKAGE = "sendframe"
ROLE = re.compile(r":(?:py:)?(?P<role>func|meth|class|mod|data|attr|exc|obj|const):`(?P<text>[^`]+)`")
EXPLICIT_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")
CODE_SPAN = re.compile(r"(``.+?``|`[^`]+`)")
DOCTEST_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")


class RstDocstrings(griffe.Extension):
    """Rewrites every docstring of the sendframe package once the whole package is loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.name != PACKAGE:
            return
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = _markdown(obj, obj.docstring.value, loader)


def _objects(obj: griffe.Object) -> list[griffe.Object]:
    """``obj`` and every object defined under it (imports left out: they are documented where they are defined)."""
    found = [obj]
    for member in obj.members.values():
        if not isinstance(member, griffe.Alias):
            found.extend(_objects(member))
    return found


def _markdown(obj: griffe.Object, text: str, loader: griffe.GriffeLoader) -> str:
    lines = _fenced_examples(text.splitlines())
    fence = False
    for i, line in enumerate(lines):
        fence ^= line.startswith("```")
        if not fence:
            lines[i] = _escaped_prose(line)
    return ROLE.sub(lambda match: _reference(obj, match, loader), "\n".join(lines))


def _escaped_prose(line: str) -> str:
    """``<`` outside code spans as ``&lt;``: prose such as "missing text -> <NA>" is no HTML tag."""
    pieces = CODE_SPAN.split(line)  # the code spans at odd positions
    return "".join(piece if i % 2 else piece.replace("<", "&lt;") for i, piece in enumerate(pieces))


def _fenced_examples(lines: list[str]) -> list[str]:
    """Each run of doctest lines (``>>>`` up to the next blank line) as a fenced block at the left margin."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        if not stripped.startswith(">>>"):
            out.append(lines[i])
            i += 1
            continue
        indent = len(lines[i]) - len(stripped)
        block: list[str] = []
        while i < len(lines) and lines[i].strip():
            block.append(DOCTEST_DIRECTIVE.sub("", lines[i][indent:]))
            i += 1
        out.extend(["", "```pycon", *block, "```", ""])
    return out


def _reference(obj: griffe.Object, match: re.Match[str], loader: griffe.GriffeLoader) -> str:
    text = match["text"]
    if explicit := EXPLICIT_TITLE.match(text):
        title, target = explicit["title"], explicit["target"]
    else:
        target = text.removeprefix("~")
        title = target.rsplit(".", 1)[-1] if text.startswith("~") else target
    target = target.removesuffix("()")
    path = _resolve(obj, target, loader)
    if path is None:
        if target.split(".", 1)[0] == PACKAGE or "." not in target:
            log.warning("%s: the docstring's %s names %r, which does not exist", obj.path, match.group(0), target)
        path = target  # another package's object: shown as code
    return f'<autoref identifier="{path}" optional><code>{title}</code></autoref>'


def _resolve(obj: griffe.Object, target: str, loader: griffe.GriffeLoader) -> str | None:
    """The path of the object ``target`` names in ``obj``'s docstring, or None when it names nothing."""
    first, *rest = target.split(".")
    scope: griffe.Object | None = obj if (obj.is_class or obj.is_module) else obj.parent
    while scope is not None:
        if first in scope.members:
            return _follow(scope.members[first], rest)
        scope = scope.parent
    if first in loader.modules_collection.members:
        return _follow(loader.modules_collection.members[first], rest)
    return None


def _follow(found: griffe.Object | griffe.Alias, rest: list[str]) -> str | None:
    target = _target(found)
    for name in rest:
        if isinstance(target, str) or name not in target.members:
            return None
        target = _target(target.members[name])
    return target if isinstance(target, str) else target.path


def _target(found: griffe.Object | griffe.Alias) -> griffe.Object | griffe.Alias | str:
    """What an import points to, or its dotted path when it points outside the loaded packages."""
    if not isinstance(found, griffe.Alias):
        return found
    try:
        return found.final_target
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return found.target_path
