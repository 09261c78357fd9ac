"""The Dask engine: what each pandas function of sendframe does when its table is a Dask frame.

Registered under the ``sendframe.engines`` entry point group (pyproject.toml), so the pandas
functions marked :func:`sendframe.engines.dispatched` find it when they meet a Dask frame and
never import this package. Each entry maps one pandas function (by module and qualified name) to
its Dask twin, which gets that function (as its module holds it) and the call's arguments by name,
and runs it over the partitions (:mod:`~sendframe.scale.messages`, :mod:`~sendframe.scale.contacts`,
:mod:`~sendframe.scale.callbacks`, :mod:`~sendframe.scale.sending`).

    >>> import pandas as pd
    >>> DaskEngine().claims(pd.DataFrame())
    False
    >>> "sendframe.campaign.message.Message.prepare" in TWINS
    True
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from sendframe.campaign.message_options import RUN_SETTINGS
from sendframe.campaign.send import SendOptions
from sendframe.engines import function_name
from sendframe.errors import InputError
from sendframe.scale import callbacks, contacts, messages, sending
from sendframe.scale.runtime import is_dask_frame

__all__ = ["TWINS", "DaskEngine"]

Twin = Callable[[Callable[..., Any], Mapping[str, Any]], Any]


def _send(function: Callable[..., Any], arguments: Mapping[str, Any]) -> Any:
    msg, contacts, options = arguments["self"], arguments["contacts"], arguments["options"]
    if any(name in options for name in RUN_SETTINGS if name != "suppression"):
        # the pandas send's own body applies them and sends the changed message (back here, without them)
        return inspect.unwrap(function)(msg, contacts, **options)
    return sending.send_partitions(msg, contacts, SendOptions.of(options, "Message.send", also=RUN_SETTINGS))


def _read_contacts(function: Callable[..., Any], arguments: Mapping[str, Any]) -> Any:
    return contacts.read_partitioned(function, arguments["path_or_frame"], phone_column=arguments["phone_column"],
                                     email_column=arguments["email_column"],
                                     default_region=arguments["default_region"] or "",
                                     country_column=arguments["country_column"], names=arguments["names"],
                                     **arguments["read_options"])


def _delivery_summary(function: Callable[..., Any], arguments: Mapping[str, Any]) -> Any:
    if arguments["contacts"] is not None:
        raise InputError("delivery_summary of Dask frames takes no contacts=: join the contact columns to the "
                         "results first (results.join(contacts[[...]])) and group by them.")
    return callbacks.summary_partitions(arguments["results"], arguments["callbacks"], by=arguments["by"],
                                        records=arguments["records"], estimate=arguments["estimate"])


TWINS: dict[str, Twin] = {
    "sendframe.campaign.message.Message.render": lambda function, arguments: messages.render(
        arguments["self"], arguments["contacts"], field=arguments["field"]),
    "sendframe.campaign.message.Message.prepare": lambda function, arguments: messages.prepare(
        arguments["self"], arguments["contacts"],
        **{k: v for k, v in arguments.items() if k not in ("self", "contacts")}),
    "sendframe.campaign.message.Message.send": _send,
    "sendframe.campaign.estimate.estimate_totals": lambda function, arguments: messages.estimate_totals(
        arguments["frame"]),
    "sendframe.campaign.contacts.read_contacts": _read_contacts,
    "sendframe.delivery.callbacks.read_callbacks": lambda function, arguments: callbacks.read_logs(
        function, arguments["path"], arguments["notification_url"]),
    "sendframe.delivery.callbacks.latest_status": lambda function, arguments: callbacks.latest_status_partitions(
        function, arguments["callbacks"]),
    "sendframe.delivery.outcomes.message_outcomes": lambda function, arguments: callbacks.outcomes_partitions(
        function, arguments["results"], arguments["callbacks"], records=arguments["records"],
        estimate=arguments["estimate"], recipients=arguments["recipients"]),
    "sendframe.delivery.metrics.delivery_summary": _delivery_summary,
}
"""Each dispatched pandas function's Dask twin, by the function's module and qualified name."""


def _public(function: Callable[..., Any]) -> Callable[..., Any]:
    """The module's own attribute of a dispatched ``function`` (its decorators included): what the workers
    get, since a function is sent to them by its module and name.

        >>> from sendframe.campaign.estimate import estimate_totals
        >>> _public(inspect.unwrap(estimate_totals)) is estimate_totals
        True
    """
    found: Any = importlib.import_module(function.__module__)
    for name in function.__qualname__.split("."):
        found = getattr(found, name)
    public: Callable[..., Any] = found
    return public


class DaskEngine:
    """The engine of Dask DataFrames and Series (``sendframe[dask]``); Dask is imported only when one is met."""

    name = "dask"

    def claims(self, value: object) -> bool:
        """Whether ``value`` is a Dask frame (told by its type, without importing Dask).

            >>> DaskEngine().claims([1, 2])
            False
        """
        return is_dask_frame(value)

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
        return twin(_public(function), bound.arguments)
