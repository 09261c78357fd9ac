"""The Dask engine: what each pandas function of sendframe does when its table is a Dask frame.

Registered under the ``sendframe.engines`` entry point group (pyproject.toml), so the pandas
functions marked :func:`sendframe.engines.dispatched` find it when they meet a Dask frame and
never import this package. Each entry maps one pandas function (by module and qualified name) to
its Dask twin, which gets that function (as its module holds it) and the call's arguments as the
function takes them (``dask=``, which chose the engine, left out), and runs it over the partitions
(:mod:`~sendframe.scale.messages`, :mod:`~sendframe.scale.contacts`, :mod:`~sendframe.scale.callbacks`,
:mod:`~sendframe.scale.sending`).

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
from sendframe.scale import callbacks, contacts, messages, runtime, sending

__all__ = ["TWINS", "DaskEngine"]

TWINS: dict[str, Callable[..., Any]] = {
    "sendframe.campaign.message.Message.render": messages.render,
    "sendframe.campaign.message.Message.prepare": messages.prepare,
    "sendframe.campaign.message.Message.send": sending.send_partitions,
    "sendframe.campaign.prepared.estimate_totals": messages.estimate_totals,
    "sendframe.campaign.contacts.read_contacts": contacts.read_partitioned,
    "sendframe.delivery.callbacks.read_callbacks": callbacks.read_logs,
    "sendframe.delivery.callbacks.latest_status": callbacks.latest_status_partitions,
    "sendframe.delivery.outcomes.message_outcomes": callbacks.outcomes_partitions,
    "sendframe.delivery.metrics.delivery_summary": callbacks.summary_partitions,
}
"""Each dispatched pandas function's Dask twin, by the function's module and qualified name."""


def _public(function: Callable[..., Any]) -> Callable[..., Any]:
    """The module's own attribute of a dispatched ``function`` (its decorators included): what the workers
    get, since a function is sent to them by its module and name.

        >>> from sendframe.campaign.prepared import estimate_totals
        >>> _public(inspect.unwrap(estimate_totals)) is estimate_totals
        True
    """
    module: Any = importlib.import_module(function.__module__)
    public: Callable[..., Any] = functools.reduce(getattr, function.__qualname__.split("."), module)
    return public


class DaskEngine:
    """The engine of Dask DataFrames and Series (``sendframe[dask]``); Dask is imported only when one is met."""

    name = "dask"

    def claims(self, value: object) -> bool:
        """Whether ``value`` is a Dask frame (told by its type, without importing Dask).

            >>> DaskEngine().claims([1, 2])
            False
        """
        return runtime.is_dask_frame(value)

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
        bound = inspect.signature(function).bind(*args, **kwargs)
        bound.apply_defaults()
        bound.arguments.pop("dask", None)  # the engine is chosen: not an argument of the twin
        return twin(_public(function), *bound.args, **bound.kwargs)
