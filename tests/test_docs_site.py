"""The reference site (mkdocs.yml): it builds in strict mode, and shows every public name, notebook and docs page.

The build is the one ``make docs`` runs, into a temporary folder. Strict mode turns every warning into a failure:
a broken link or cross-reference, a page left out of the navigation, a public name without a docstring (or a public
function without an example), a docstring's reST role naming nothing (docs/site_pages.py, docs/rst_docstrings.py).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import json
import logging
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import griffe
import pytest
from bs4 import BeautifulSoup, Tag

import sendframe

ROOT = Path(__file__).resolve().parents[1]
DOCS_PAGES = {"api-notes.md": "api-notes.html", "architecture.md": "architecture.html", "sandbox.md": "sandbox.html"}


def _docs_module(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                            "-d", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-5000:]
    return out


def _page(site: Path, name: str) -> BeautifulSoup:
    return BeautifulSoup((site / name).read_text(encoding="utf-8"), "html.parser")


def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ").split())


def _plain(docstring_line: str) -> str:
    """A docstring line as the page reads it: roles shown by their title, no reST quotes."""
    line = re.sub(r":\w+:`~[\w.]*?(\w+)`", r"\1", docstring_line)
    line = re.sub(r":\w+:`([^`]+)`", r"\1", line)
    return " ".join(line.replace("``", "").split())


def _squeezed(text: str) -> str:
    """Text without its white space (a link in a sentence comes out of the page with spaces around it)."""
    return "".join(text.split())


def _entry(reference: BeautifulSoup, name: str) -> tuple[Tag, Tag]:
    """The heading and the body (signature, docstring, members) of a public name's entry."""
    value = getattr(sendframe, name)
    heading = reference.find(id=f"{value.__module__}.{value.__qualname__}")
    assert isinstance(heading, Tag), f"sendframe.{name} is missing from the reference"
    body = heading.find_next_sibling("div", class_="doc-contents")
    assert isinstance(body, Tag), f"sendframe.{name} has no documentation body"
    return heading, body


def _parameters(value: Any) -> list[str]:
    function = value.__init__ if inspect.isclass(value) else value
    return [name for name in inspect.signature(function).parameters if name != "self"]


@pytest.mark.slow  # the build takes 10 to 30 s
def test_every_public_name_has_an_entry_with_its_signature_docstring_and_example(site: Path) -> None:
    reference = _page(site, "reference.html")
    for name in sendframe.__all__:
        value = getattr(sendframe, name)
        heading, body = _entry(reference, name)
        shown_name = heading.find(class_="doc-object-name")
        assert isinstance(shown_name, Tag) and shown_name.get_text(strip=True) == name
        doc = value.__dict__["__doc__"] if inspect.isclass(value) else value.__doc__
        first_line = _plain(doc.strip().splitlines()[0])
        assert _squeezed(first_line) in _squeezed(_text(body)), f"sendframe.{name}: docstring not shown"
        if inspect.isfunction(value) or (inspect.isclass(value) and "__init__" in vars(value)):
            signature = heading.find_next_sibling("div", class_="doc-signature")
            assert isinstance(signature, Tag), f"sendframe.{name} has no signature"
            shown = " ".join(signature.get_text().split())
            assert shown.startswith(f"{name}("), shown
            missing = [parameter for parameter in _parameters(value) if not re.search(rf"\b{parameter}\b", shown)]
            assert missing == [], f"sendframe.{name}'s signature lacks {missing}"
        if inspect.isfunction(value):
            examples = [block.get_text() for block in body.select("div.highlight") if ">>>" in block.get_text()]
            assert examples, f"sendframe.{name}: no example shown"
            assert not any("doctest:" in example for example in examples), "doctest directives are for the tests"


@pytest.mark.slow
def test_docstring_roles_are_links_to_the_entries_they_name(site: Path) -> None:
    # sms's docstring says :func:`message`: a link to that entry, not ":func:" as text
    reference = _page(site, "reference.html")
    _, body = _entry(reference, "sms")
    assert "#sendframe.campaign.message.message" in {link["href"] for link in body.select("a.autorefs-internal")}
    assert not re.search(r":(func|meth|class|mod|data|attr|exc):", _text(reference))


@pytest.mark.slow
@pytest.mark.parametrize("notebook", sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb")))
def test_each_notebook_is_rendered_with_its_text_and_code(site: Path, notebook: str) -> None:
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    page = _text(_page(site, f"notebooks/{Path(notebook).stem}.html"))
    first_code = next("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    first_words = next("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    assert " ".join(first_words.lstrip("# ").split()[:4]) in page
    assert " ".join(first_code.split()[:3]) in page.replace(" .", ".").replace(". ", ".")


@pytest.mark.slow
@pytest.mark.parametrize("source", [*DOCS_PAGES, "README.md"])
def test_the_docs_pages_and_the_readme_are_pages_of_the_site(site: Path, source: str) -> None:
    page = _page(site, DOCS_PAGES.get(source, "index.html"))
    path = ROOT / "docs" / source if source in DOCS_PAGES else ROOT / source
    title = path.read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
    h1 = page.find("h1")
    assert isinstance(h1, Tag) and _text(h1).replace("¶", "").strip() == title


def test_a_public_name_without_docstring_or_example_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    def undocumented(x: int) -> int:
        return x

    def unexampled(x: int) -> int:
        """Prose alone."""
        return x

    # a value's docstring is read from its source: HOLDOUT has one, ENCODINGS none
    site_pages = _docs_module("site_pages")
    package = types.SimpleNamespace(
        __all__=["ENCODINGS", "HOLDOUT", "undocumented", "unexampled"], __file__=sendframe.__file__,
        _EXPORTS={"ENCODINGS": "sendframe.text.encodings", "HOLDOUT": "sendframe.campaign.experiment"},
        ENCODINGS=("gsm", "gsm-pt", "utf-16"), HOLDOUT="holdout", undocumented=undocumented, unexampled=unexampled)
    with caplog.at_level(logging.WARNING):
        markdown = site_pages.reference_markdown(package)
    assert f"::: {__name__}.{undocumented.__qualname__}" in markdown
    assert "::: sendframe.campaign.experiment.HOLDOUT" in markdown
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warnings == ["sendframe.ENCODINGS has no docstring: the reference would show its name alone",
                        "sendframe.undocumented has no docstring: the reference would show its name alone",
                        "sendframe.unexampled has no example (a doctest line, >>>) in its docstring"]


def test_a_docstring_role_naming_nothing_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    rst = _docs_module("rst_docstrings")
    loader = griffe.GriffeLoader(search_paths=[str(ROOT / "src")])
    estimate = loader.load("sendframe.campaign.prepared.estimate")
    assert isinstance(estimate, griffe.Object)
    with caplog.at_level(logging.WARNING):
        markdown = rst._markdown(estimate, "See :func:`estimate_totals`, :func:`~sendframe.Message.send`, "
                                 ":class:`pandas.DataFrame` and :func:`no_such_function`.", loader)
    assert '<autoref identifier="sendframe.campaign.prepared.estimate_totals" optional>' in markdown
    assert '<autoref identifier="sendframe.campaign.message.Message.send" optional><code>send</code>' in markdown
    assert '<autoref identifier="pandas.DataFrame" optional>' in markdown
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warnings == ["sendframe.campaign.prepared.estimate: the docstring's :func:`no_such_function` names "
                        "'no_such_function', which does not exist"]


@pytest.mark.slow
def test_a_message_setting_shows_the_help_the_cli_and_the_composer_show(site: Path) -> None:
    # the settings' help is field metadata (docs/runtime_functions.py gives it to the reference as a docstring)
    reference = _page(site, "reference.html")
    help_text = {f.name: f.metadata["help"] for f in dataclasses.fields(sendframe.Message) if "help" in f.metadata}
    assert "to" in help_text and "quiet_hours" in help_text
    for name, text in help_text.items():
        heading = reference.find(id=f"sendframe.campaign.message.Message.{name}")
        assert isinstance(heading, Tag), f"Message.{name} is missing from the reference"
        body = heading.find_next_sibling("div", class_="doc-contents")
        assert isinstance(body, Tag) and _squeezed(text) in _squeezed(_text(body)), f"Message.{name}: help not shown"
