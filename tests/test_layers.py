"""The layering of docs/architecture.md ("Layers"), as the imports show it: no import cycles, each part
imports only the parts of the layers below its own, the sandbox never the toolkit, and the pandas
layer never the Dask engine above it (it finds engines through sendframe.engines' entry points).

Imports are read from each module's syntax tree: at the top, inside functions, and the module names
given to ``importlib.import_module``; imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from importlib.metadata import entry_points
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "sendframe"

# the parts of sendframe, lowest first; a part imports only the parts of lower layers (see docs/architecture.md)
LAYERS: list[set[str]] = [
    {"errors"},
    {"channels", "engines", "memory", "send_outcomes", "text"},
    {"api", "pricing"},
    {"options"},
    {"delivery"},  # records, receiver, callbacks, outcomes, metrics: campaign's ledger_keys reads logs through it
    {"campaign"},  # the pandas send path
    {"scale", "notebook", "sandbox"},  # Dask engine and notebooks above the pandas code; the service beside them
    {"cli", "demo", ""},  # "": the package's __init__ (lazy re-exports)
]
LAYER_OF = {part: number for number, parts in enumerate(LAYERS) for part in parts}
TOOLKIT = {"campaign", "delivery", "scale", "notebook", "engines", "send_outcomes"}
PANDAS_LAYER = {"campaign", "delivery"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_of(name: str) -> str:
    """``name`` if it is a module, else the module holding it (``from sendframe.x import y``: y may be a name)."""
    return name if (SRC / (name.replace(".", "/") + ".py")).exists() or (SRC / name.replace(".", "/")).is_dir() \
        else name.rsplit(".", 1)[0]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(path: Path, *, top_level_only: bool = False) -> set[str]:
    """The sendframe modules ``path`` imports (only those imported when it is imported, if ``top_level_only``)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _is_type_checking(node):
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sendframe"):
            found.update(_module_of(f"{node.module}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("sendframe"))
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("import_module", "__import__")):
            found.update(_module_of(arg.value) for arg in node.args
                         if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                         and arg.value.startswith("sendframe"))
        if top_level_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}
GRAPH = {name: imports_of(path, top_level_only=True) for name, path in MODULES.items()}
EVERY_IMPORT = {name: imports_of(path) for name, path in MODULES.items()}


def _part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else ""


def test_every_part_has_a_layer():
    assert sorted({_part(m) for m in MODULES} - set(LAYER_OF)) == []


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


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _part(m)))
def test_each_part_imports_only_the_layers_below_it(module):
    part = _part(module)
    wrong = sorted(target for target in EVERY_IMPORT[module]
                   if target != "sendframe" and _part(target) != part and LAYER_OF[_part(target)] >= LAYER_OF[part])
    below = sorted(p for p, n in LAYER_OF.items() if n < LAYER_OF[part] and p)
    assert wrong == [], f"{module} imports {wrong}; {part} may import {below}"


def test_the_sandbox_never_imports_the_toolkit():
    sandbox = [m for m in MODULES if _part(m) == "sandbox"]
    assert sandbox
    assert not [(m, t) for m in sandbox for t in EVERY_IMPORT[m] if _part(t) in TOOLKIT]


def _imports_scale(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return module.startswith("sendframe.scale") or (module == "sendframe" and any(
            alias.name == "scale" for alias in node.names))
    if isinstance(node, ast.Import):
        return any(alias.name.startswith("sendframe.scale") for alias in node.names)
    if isinstance(node, ast.Call) and "import" in ast.unparse(node.func):  # import_module, __import__, find_spec
        given = [*node.args, *(keyword.value for keyword in node.keywords)]
        return any(isinstance(arg, ast.Constant) and "scale" in str(arg.value) for arg in given)
    return False


def _mentions_of_scale(path: Path) -> list[str]:
    """Every import of ``sendframe.scale`` in a module: statements anywhere, and any call that imports by name."""
    return [ast.unparse(node) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if _imports_scale(node)]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _part(m) in PANDAS_LAYER))
def test_the_pandas_layer_never_imports_the_dask_engine(module):
    assert _mentions_of_scale(MODULES[module]) == []


def test_the_scale_check_sees_an_import_hidden_in_a_function(tmp_path):
    hidden = tmp_path / "hidden.py"
    hidden.write_text("def f():\n    import importlib\n    return importlib.import_module('sendframe.scale.frames')\n"
                      "def g():\n    from sendframe.scale import messages\n")
    assert len(_mentions_of_scale(hidden)) == 2


def test_the_dask_engine_is_found_by_its_entry_point():
    (point,) = [p for p in entry_points(group="sendframe.engines") if p.name == "dask"]
    assert point.value == "sendframe.scale.engine:DaskEngine"
    assert point.load()().name == "dask"
