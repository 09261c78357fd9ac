"""mkdocs hook: the pages the site builds from elsewhere in the checkout.

- ``index.md``: README.md, the home page;
- ``notebooks/*.ipynb``: the notebooks, rendered by mkdocs-jupyter as they are stored (the tests execute them);
- ``reference.md``: one entry per name of ``sendframe.__all__``, grouped by the package that defines it, each
  documented by mkdocstrings where it is defined (the top level re-exports lazily through ``__getattr__``, so the
  names are read from the imported package, never restated here).

A public name without a docstring of its own, or a public function without an example, is a warning: it fails
``mkdocs build --strict`` (what ``make docs`` and tests/test_docs_site.py run).
"""

from __future__ import annotations

import importlib
import inspect
import logging
from pathlib import Path
from typing import Any

import griffe
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.plugins.sendframe.site_pages")

PACKAGE = "sendframe"
REFERENCE_PAGE = "reference.md"

# the package that defines a public name -> its section of the reference, in this order (others follow)
SECTIONS = {
    "campaign": "Contacts, messages and sends",
    "delivery": "Delivery: records, callbacks, outcomes",
    "api": "The client",
    "sandbox": "The sandbox",
    "notebook": "In a notebook",
    "scale": "At scale",
    "text": "Text",
    "errors": "Errors and warnings",
}


@event_priority(100)  # before mkdocs-jupyter's on_files, which wraps the notebooks added here
def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = Path(str(config.config_file_path)).parent
    package = _imported_package(root)
    files.append(File.generated(config, "index.md", content=(root / "README.md").read_text(encoding="utf-8")))
    for notebook in sorted((root / "notebooks").glob("*.ipynb")):
        # a file of the checkout's notebooks/, as if in docs/ (mkdocs-jupyter reads it from its abs_src_path)
        files.append(File(f"notebooks/{notebook.name}", str(root), config.site_dir, config.use_directory_urls))
    files.append(File.generated(config, REFERENCE_PAGE, content=reference_markdown(package)))
    return files


def _imported_package(root: Path) -> Any:
    """sendframe as Python imports it, checked to be this checkout's (mkdocstrings reads the source in src/)."""
    package = importlib.import_module(PACKAGE)
    source = (root / "src" / PACKAGE).resolve()
    imported = Path(str(package.__file__)).resolve().parent
    if imported != source:
        raise PluginError(
            f"Python imports {PACKAGE} from {imported}, not from {source}: "
            "install this checkout (pip install -e .) or set PYTHONPATH=src"
        )
    return package


def public_paths(package: Any) -> dict[str, str]:
    """Each name of ``__all__`` -> the dotted path of the object where it is defined."""
    paths = {}
    for name in package.__all__:
        value = getattr(package, name)
        if inspect.isclass(value) or inspect.isroutine(value):
            paths[name] = f"{value.__module__}.{value.__qualname__}"
            docstring = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
            _check_documented(name, docstring or "", example=inspect.isfunction(value))
        else:  # a value (a constant): where it is defined and its docstring are read from the source
            paths[name] = f"{package._EXPORTS[name]}.{name}"  # noqa: SLF001  the lazy exports name its module
            _check_documented(name, _source_docstring(package, paths[name]), example=False)
    return paths


def _source_docstring(package: Any, path: str) -> str:
    found = griffe.load(path, search_paths=[str(Path(str(package.__file__)).parents[1])])
    return found.docstring.value if found.docstring else ""


def _check_documented(name: str, docstring: str, *, example: bool) -> None:
    if not docstring.strip():
        log.warning("%s.%s has no docstring: the reference would show its name alone", PACKAGE, name)
    elif example and ">>>" not in docstring:
        log.warning("%s.%s has no example (a doctest line, >>>) in its docstring", PACKAGE, name)


def reference_markdown(package: Any) -> str:
    """The reference page: an mkdocstrings entry per public name, in sections by defining package."""
    sections: dict[str, list[str]] = {}
    for name, path in public_paths(package).items():
        shared = _written_in_private_base(getattr(package, name))
        entry = f"::: {path}" + ("\n    options:\n      inherited_members: true" if shared else "")
        sections.setdefault(path.split(".")[1], []).append(entry)
    order = [*(key for key in SECTIONS if key in sections), *sorted(set(sections) - set(SECTIONS))]
    lines = [
        "# API reference",
        "",
        f"Every name of `{PACKAGE}.__all__`, imported from the top level (`import {PACKAGE}` then "
        f"`{PACKAGE}.sms(...)`, or `from {PACKAGE} import sms`), with its signature, docstring and example. Each "
        "is documented where it is defined; the text helpers and engines stay importable from their modules.",
        "",
    ]
    for key in order:
        lines += [f"## {SECTIONS.get(key, key.capitalize())}", ""]
        for entry in sections[key]:
            lines += [entry, ""]
    return "\n".join(lines)


def _written_in_private_base(value: Any) -> bool:
    """A class with methods written once in a private base (the two clients' endpoints): its entry shows them."""
    return inspect.isclass(value) and any(base.__name__.startswith("_") for base in value.__mro__[1:-1])
