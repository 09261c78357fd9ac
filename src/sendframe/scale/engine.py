"""The Dask engine: what each pandas function of sendframe does when its table is a Dask frame.

Registered under the ``sendframe.engines`` entry point group (pyproject.toml), so the pandas
functions marked :func:`sendframe.engines.dispatched` find it when they meet a Dask frame and
never import this package. Each entry maps one pandas function (by module and qualified name) to
its Dask twin, which gets that function (as its module holds it) and the call's arguments as the
function takes them (``dask=``, which chose the engine, left out), and runs it over the partitions
(:mod:`~sendframe.scale.messages`, :mod:`~sendframe.scale.contacts`, :mod:`~sendframe.scale.callbacks`,
:mod:`~sendframe.scale.sending`). Those modules import Dask, so they are imported by name when a Dask frame
is met: the engine is also loaded for tables that are no Dask frame (a Polars frame read as contacts).

    >>> import pandas as pd
    >>> DaskEngine().claims(pd.DataFrame())
    False
    >>> "sendframe.campaign.message.Message.prepare" in TWINS
    True
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from sendframe.engines import function_name
from sendframe.errors import InputError

__all__ = ["TWINS", "DaskEngine"]

TWINS: dict[str, str] = {
    "sendframe.campaign.message.Message.render": "sendframe.scale.messages:render",
    "sendframe.campaign.message.Message.prepare": "sendframe.scale.messages:prepare",
    "sendframe.campaign.message.Message.send": "sendframe.scale.sending:send_partitions",
    "sendframe.campaign.prepared.estimate_totals": "sendframe.scale.messages:estimate_totals",
    "sendframe.campaign.contacts.read_contacts": "sendframe.scale.contacts:read_partitioned",
    "sendframe.delivery.callbacks.read_callbacks": "sendframe.scale.callbacks:read_logs",
    "sendframe.delivery.callbacks.latest_status": "sendframe.scale.callbacks:latest_status_partitions",
    "sendframe.delivery.outcomes.message_outcomes": "sendframe.scale.callbacks:outcomes_partitions",
    "sendframe.delivery.metrics.delivery_summary": "sendframe.scale.callbacks:summary_partitions",
}
"""Each dispatched pandas function's Dask twin (``module:name``, as an entry point names an object), by the
function's module and qualified name."""


def _attribute(module: str, name: str) -> Any:
    """The attribute ``name`` (dotted for a method) of ``module``, imported: a twin, or a dispatched function as
    its module holds it (its decorators included), which is what the workers get (a function is sent to them by
    its module and name).

        >>> from sendframe.campaign.prepared import estimate_totals
        >>> _attribute("sendframe.campaign.prepared", "estimate_totals") is estimate_totals
        True
    """
    return functools.reduce(getattr, name.split("."), importlib.import_module(module))


class DaskEngine:
    """The engine of Dask DataFrames and Series (``sendframe[dask]``); Dask is imported only when one is met."""

    name = "dask"

    def claims(self, value: object) -> bool:
        """Whether ``value`` is a Dask DataFrame or Series (a Dask collection with partitions: no Dask imported).

            >>> DaskEngine().claims([1, 2])
            False
        """
        return hasattr(value, "__dask_graph__") and hasattr(value, "map_partitions")

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)`` on Dask frames: its twin in :data:`TWINS`, given the arguments by name.

            >>> DaskEngine().run(len, [1, 2])
            Traceback (most recent call last):
            ...
            sendframe.errors.InputError: builtins.len does not take Dask frames: compute them first (.compute()).
        """
        twin = TWINS.get(function_name(function))
        if twin is None:
            raise InputError(f"{function_name(function)} does not take Dask frames: compute them first (.compute()).")
        try:
            importlib.import_module("dask.dataframe")
        except ImportError as exc:  # pragma: no cover - the extra is installed in CI
            raise ImportError("Working on Dask frames needs dask[dataframe] and distributed: "
                              "pip install 'sendframe[dask]'") from exc
        bound = inspect.signature(function).bind(*args, **kwargs)
        bound.apply_defaults()
        bound.arguments.pop("dask", None)  # the engine is chosen: not an argument of the twin
        public = _attribute(function.__module__, function.__qualname__)
        return _attribute(*twin.split(":"))(public, *bound.args, **bound.kwargs)
