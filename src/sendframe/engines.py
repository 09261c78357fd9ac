"""Which engine does a function's work: pandas itself, or a lazy engine that a package registers.

The campaign and delivery functions are written for pandas frames. One marked :func:`dispatched`
hands a call whose table is a lazy frame (a Dask DataFrame) to the engine that claims it, and that
engine runs the same pandas function over the frame's partitions. Engines register themselves
under the ``sendframe.engines`` entry point group (``sendframe.scale`` registers ``dask`` in
pyproject.toml) and are looked up with :mod:`importlib.metadata` only when a table that is not a
pandas object is met, the way pandas finds its plotting backends. So the pandas layer never
imports the engines above it, and asks which engine once, here, instead of in every method.

    >>> import pandas as pd
    >>> engine_for(pd.DataFrame({"phone": ["34600123456"]})).name
    'pandas'
    >>> @dispatched("frame")
    ... def rows(frame):
    ...     return len(frame)
    >>> rows(pd.DataFrame({"phone": ["34600123456"]}))
    1

Next to :mod:`sendframe.errors` at the bottom of the layering: it imports nothing else of sendframe.
"""

from __future__ import annotations

import functools
import glob
import inspect
import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import numpy as np
import pandas as pd

from sendframe.errors import ConfigurationError, InputError

__all__ = ["ENTRY_POINT_GROUP", "PANDAS", "Engine", "dispatched", "engine_for", "engine_named", "function_name",
           "named_files", "registered_engines", "several_files"]

ENTRY_POINT_GROUP = "sendframe.engines"

F = TypeVar("F", bound=Callable[..., Any])

# values that are never a lazy frame: seeing only these, no engine is looked up
_EAGER: tuple[type, ...] = (pd.DataFrame, pd.Series, pd.Index, np.ndarray, str, bytes, os.PathLike, int, float,
                            list, tuple, dict, type(None))


class Engine(Protocol):
    """What an engine registered under ``sendframe.engines`` is: a name, which tables are its, and a runner."""

    name: str

    def claims(self, value: object) -> bool:
        """Whether ``value`` is one of this engine's tables."""

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)`` done by this engine (``function`` is the pandas one)."""


class _Pandas:
    """The engine the functions are written for: it calls them."""

    name = "pandas"

    def claims(self, value: object) -> bool:
        return isinstance(value, (pd.DataFrame, pd.Series))

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)


PANDAS: Engine = _Pandas()


def several_files(source: Any) -> bool:
    """Whether ``source`` names several files: a list, a glob or a folder (what ``read_contacts`` and
    ``read_callbacks`` read with a lazy engine by default); a table is not a file.

        >>> several_files("callbacks.log"), several_files(["a.log", "b.log"]), several_files("logs/*.log")
        (False, True, True)
    """
    if isinstance(source, (list, tuple)):
        return True
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fspath(source)
    return any(c in text for c in "*?[") or os.path.isdir(text)


def named_files(source: Any, what: str, suffixes: tuple[str, ...] = ()) -> list[str]:
    """The files ``source`` names, in order: a file, a glob, a folder (its files ending in one of ``suffixes``, or
    all; those named ``.*`` or ``_*`` left out), or a list of those. ``what`` names the files in the errors.

        >>> named_files(["data/contacts.csv", "data/*.csv"], "contacts file")[:2]
        ['data/contacts.csv', 'data/contacts.csv']
    """
    if isinstance(source, (list, tuple)):
        return [f for item in source for f in named_files(item, what, suffixes)]
    text = os.fspath(source)
    if any(c in text for c in "*?["):
        found = sorted(glob.glob(text))
    elif os.path.isdir(text):
        found = sorted(str(p) for p in Path(text).rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
                       and (not suffixes or p.suffix.lower() in suffixes))
    elif os.path.isfile(text):
        found = [text]
    else:
        raise InputError(f"The {what} {text!r} does not exist.")
    if not found:
        in_folder = f" (a folder's files ending {', '.join(suffixes)})" if suffixes else ""
        raise InputError(f"No {what} matches {text!r}{in_folder}.")
    return found


def function_name(function: Callable[..., Any]) -> str:
    """The name an engine knows a dispatched function by: its module and qualified name.

        >>> function_name(engine_for)
        'sendframe.engines.engine_for'
    """
    return f"{function.__module__}.{function.__qualname__}"


@functools.cache
def registered_engines() -> dict[str, Engine]:
    """The engines installed packages register (``[project.entry-points."sendframe.engines"]``), by name.

        >>> "dask" in registered_engines()  # doctest: +SKIP
        True
    """
    found: dict[str, Engine] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point.load()())
    return found


def engine_named(name: str) -> Engine:
    """The engine called ``name`` (``"pandas"``, or one a package registers).

        >>> engine_named("pandas").name
        'pandas'
    """
    if name == PANDAS.name:
        return PANDAS
    engines = registered_engines()
    if name not in engines:
        known = ", ".join(sorted([PANDAS.name, *engines]))
        hint = " (pip install 'sendframe[dask]', and reinstall sendframe so its entry points are known)" \
            if name == "dask" else ""
        raise ConfigurationError(f"No sendframe engine named {name!r} is installed{hint}; installed: {known}.")
    return engines[name]


def engine_for(*values: object, named: str | None = None) -> Engine:
    """The engine for a call on ``values``: the one ``named``, else the registered engine that claims
    one of them, else pandas (registered engines are looked up only for a value that is not pandas').

        >>> engine_for(None, [1, 2]).name, engine_for(named="pandas").name
        ('pandas', 'pandas')
    """
    if named is not None:
        return engine_named(named)
    foreign = [value for value in values if not isinstance(value, _EAGER)]
    if foreign:
        for engine in registered_engines().values():
            if any(engine.claims(value) for value in foreign):
                return engine
        if any(hasattr(value, "__dask_graph__") for value in foreign):  # a Dask collection nobody claimed
            return engine_named("dask")  # says how to install it
    return PANDAS


def dispatched(*frames: str, named_by: Callable[[Mapping[str, Any]], str | None] | None = None) -> Callable[[F], F]:
    """Run the decorated pandas function on the engine of its ``frames`` arguments (see the module docstring).

    ``named_by``, given the call's arguments by name (defaults filled in), may name the engine
    itself: ``read_contacts(..., dask=True)`` asks for ``"dask"`` whatever the source is.

        >>> @dispatched("frame", named_by=lambda arguments: "pandas")
        ... def first(frame, column="phone"):
        ...     return frame[column].iloc[0]
        >>> import pandas as pd
        >>> first(pd.DataFrame({"phone": ["34600123456"]}))
        '34600123456'
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        unknown = [name for name in frames if name not in signature.parameters]
        if unknown:
            raise TypeError(f"{function.__qualname__} has no parameter {unknown[0]!r} to dispatch on")

        @functools.wraps(function)
        def on_its_engine(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            engine = engine_for(*(arguments[name] for name in frames),
                                named=named_by(arguments) if named_by is not None else None)
            return function(*args, **kwargs) if engine is PANDAS else engine.run(function, *args, **kwargs)

        return cast(F, on_its_engine)

    return decorate
