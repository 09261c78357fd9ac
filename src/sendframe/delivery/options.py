"""Unknown keywords are errors that name the closest known option.

    >>> @checked_options
    ... def wait(ids, *, timeout: float = 1.0) -> float:
    ...     return timeout
    >>> wait([], timout=3)
    Traceback (most recent call last):
    ...
    sendframe.errors.UnknownOptionError: wait() has no option 'timout'. Did you mean 'timeout'? Its options: ids, timeout.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeVar

from sendframe.errors import UnknownOptionError

P = ParamSpec("P")
R = TypeVar("R")


def unknown_option(where: str, name: str, known: Iterable[str]) -> UnknownOptionError:
    """The error for an option ``name`` that ``where`` does not know, with the closest known one.

    >>> str(unknown_option("outcomes()", "contact", ["contacts", "records"]))
    "outcomes() has no option 'contact'. Did you mean 'contacts'? Its options: contacts, records."
    """
    options = [option for option in known if option not in ("self", "cls")]
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return UnknownOptionError(f"{where} has no option {name!r}.{hint} Its options: {', '.join(options)}.")


def checked_options(function: Callable[P, R]) -> Callable[P, R]:
    """Wrap ``function`` so that an unknown keyword raises ``UnknownOptionError`` (a ``TypeError`` too)."""
    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return function
    known = frozenset(name for name, p in parameters.items() if p.kind is not inspect.Parameter.POSITIONAL_ONLY)
    where = function.__qualname__.removesuffix(".__init__") + "()"

    @functools.wraps(function)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs and not known.issuperset(kwargs):
            name = next(name for name in kwargs if name not in known)
            raise unknown_option(where, name, list(parameters))
        return function(*args, **kwargs)

    return checked
