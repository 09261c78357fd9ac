"""The layering the imports show: no import cycles, and each layer imports only the layers below it.

The graph is read from each module's top-level imports (what runs when the module is imported;
imports under ``if TYPE_CHECKING:`` are left out, they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "sendframe"

# what each part may import of sendframe (besides itself); see docs/architecture.md, "Layers"
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "channels": {"errors"},
    "text": {"errors"},
    "pricing": {"errors", "channels", "api"},
    "api": {"errors", "channels", "text", "pricing"},
    "options": {"errors", "api"},
    "campaign": {"errors", "channels", "options", "text", "api", "pricing", "delivery", "scale"},
    "delivery": {"errors", "channels", "options", "text", "api", "pricing", "campaign", "scale"},
    "scale": {"errors", "channels", "options", "text", "api", "pricing", "campaign", "delivery"},
    "notebook": {"errors", "channels", "options", "text", "api", "pricing", "campaign", "delivery"},
    "sandbox": {"errors", "channels", "options", "text", "api", "pricing"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    """The sendframe modules a module imports when it is imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sendframe"):
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    found.add(candidate if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists()
                              else node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name.startswith("sendframe"))

    visit(tree.body)
    return found


GRAPH = {module_name(path): top_level_imports(path) for path in PACKAGE.rglob("*.py")}


def _part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else ""


def test_no_module_imports_itself_back_through_other_modules():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in GRAPH.get(node, ()):
            if target == "sendframe" or target not in GRAPH:
                continue  # the package's __init__ re-exports lazily: importing it imports nothing else
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in GRAPH:
        if module not in index:
            connect(module)
    assert cycles == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if _part(m) in ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(module):
    part = _part(module)
    wrong = sorted(target for target in GRAPH[module]
                   if _part(target) not in ALLOWED[part] | {part} and target != "sendframe")
    assert wrong == [], f"{module} imports {wrong}; {part} may import {sorted(ALLOWED[part])}"


def test_the_sandbox_never_imports_the_toolkit():
    sandbox = [m for m in GRAPH if _part(m) == "sandbox"]
    assert sandbox
    assert not [(m, t) for m in sandbox for t in GRAPH[m] if _part(t) in {"campaign", "delivery", "notebook", "scale"}]
