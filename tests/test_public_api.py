"""The public namespace: every name in __all__ resolves, and __all__ is sorted."""

from __future__ import annotations

import ast
import importlib
import json
import re
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


# what an analyst reads: the top-level names, plus the sandbox and the chart functions as public submodules
PUBLIC_SUBMODULES = {"sendframe.sandbox", "sendframe.notebook.charts"}
ROOT = Path(__file__).resolve().parents[1]


def _documented_code() -> list[tuple[str, str]]:
    """(where, code) of every Python block of the README and every code cell of the notebooks."""
    found = [(f"README.md block {i}", block) for i, block in
             enumerate(re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S))]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        found += [(f"{notebook.name} cell {i}", "".join(cell["source"])) for i, cell in enumerate(cells)
                  if cell["cell_type"] == "code"]
    return found


def _outside_the_public_surface(code: str) -> list[str]:
    wrong = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sendframe"):
            if node.module == "sendframe":
                wrong += [alias.name for alias in node.names if alias.name not in sendframe.__all__]
            elif not any(f"{node.module}.".startswith(f"{public}.") for public in PUBLIC_SUBMODULES) and not any(
                    f"{node.module}.{alias.name}" in PUBLIC_SUBMODULES for alias in node.names):
                wrong.append(node.module)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sendframe"
              and node.attr not in sendframe.__all__):
            wrong.append(f"sendframe.{node.attr}")
    return wrong


def test_the_readme_and_the_notebooks_use_only_the_public_surface():
    wrong = {where: names for where, code in _documented_code() if (names := _outside_the_public_surface(code))}
    assert wrong == {}


def test_the_checker_sees_a_name_outside_the_surface():
    assert _outside_the_public_surface("import sendframe\nsendframe.sms_parts('x')") == ["sendframe.sms_parts"]
    assert _outside_the_public_surface("from sendframe.text.templates import parse") == ["sendframe.text.templates"]
    assert _outside_the_public_surface("from sendframe.notebook import charts\n"
                                       "from sendframe.sandbox import Sandbox") == []


def test_the_public_surface_has_no_second_name_for_one_thing():
    # each pair: a name that was an overlap, and the one way that stays (docs/architecture.md, "Public surface")
    gone = {"render": "Message.render", "preflight": "Message.preflight", "estimate": "Message.estimate",
            "local_send_times": "Message.schedule", "Variants": "variants", "message_outcomes": "outcomes",
            "send_campaign": "message(channel, ...).send", "sms_parts": "Message.estimate",
            "MessageCounter": "Composer"}
    assert sorted(set(gone) & set(sendframe.__all__)) == []
    assert len(sendframe.__all__) <= 55
