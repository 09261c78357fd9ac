"""Keyword checking: an option sendframe does not know is an error naming the closest one it does.

A mistyped option must never be ignored (``max_cots=9`` silently sending the whole campaign), so
every public function that takes ``**kwargs`` passes them through :func:`check_options`, and
request fields are checked against the spec's fields with :func:`request_field_names`.

    >>> check_options({"parts": 2}, ["parts", "encoding"], "sendframe.sms")
    >>> check_options({"encodng": "auto"}, ["parts", "encoding"], "sendframe.sms")
    Traceback (most recent call last):
    ...
    sendframe.errors.UnknownOptionError: sendframe.sms() got an unknown option 'encodng'. Did you mean 'encoding'?
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from sendframe.api.models import REQUEST_MODELS
from sendframe.errors import UnknownOptionError

__all__ = ["check_options", "closest", "keyword_checked", "request_field_names", "snake_case"]

F = TypeVar("F", bound=Callable[..., Any])


def snake_case(name: str) -> str:
    """``campaignName`` -> ``campaign_name`` (snake_case names are left as they are).

        >>> snake_case("notificationUrl"), snake_case("parts")
        ('notification_url', 'parts')
    """
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name`` (case and ``_`` ignored), or None when nothing is close.

        >>> closest("Encoding", ["parts", "encoding"]), closest("zzz", ["parts"])
        ('encoding', None)
    """
    known = sorted(known, key=lambda k: k != k.lower())  # snake_case first: it is the Python spelling
    folded: dict[str, str] = {}
    for k in known:
        folded.setdefault(k.replace("_", "").lower(), k)
    key = name.replace("_", "").lower()
    if key in folded:
        return folded[key]
    match = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.6)
    if match:
        return folded[match[0]]
    match = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return match[0] if match else None


def check_options(given: Mapping[str, Any] | Iterable[str], known: Iterable[str], where: str,
                  *, hint: str = "") -> None:
    """Raise :class:`UnknownOptionError` for the first name of ``given`` not in ``known``.

    ``where`` names the function (``"sendframe.send_sms"``); ``hint`` is added to the message
    (e.g. where the known options are documented).

        >>> check_options(["max_cost"], ["parts"], "send_sms", hint="Known: parts.")
        Traceback (most recent call last):
        ...
        sendframe.errors.UnknownOptionError: send_sms() got an unknown option 'max_cost'. Known: parts.
    """
    known = list(known)
    known_set = set(known)
    for name in given:
        if name in known_set:
            continue
        near = closest(str(name), known)
        suggestion = f" Did you mean {near!r}?" if near else ""
        raise UnknownOptionError(f"{where}() got an unknown option {name!r}.{suggestion}{' ' + hint if hint else ''}")


@functools.cache
def request_field_names(channel: str) -> dict[str, str]:
    """Every spelling of the request fields of ``channel`` (snake_case and the spec's camelCase) -> wire name.

    ``to``, ``sub`` and ``messages`` are left out: sendframe builds them from the contacts.

        >>> names = request_field_names("sms")
        >>> names["campaign_name"], names["campaignName"], names["sender"], names["from"]
        ('campaignName', 'campaignName', 'from', 'from')
    """
    model = REQUEST_MODELS[channel]
    names: dict[str, str] = {}
    for attribute, field in model.model_fields.items():
        wire = field.alias or attribute
        if wire in {"to", "sub", "messages"}:
            continue
        names[attribute] = wire
        names[wire] = wire
        names[snake_case(wire)] = wire
    if "from" in names:
        names["from_"] = "from"
    return names


def keyword_checked(function: F) -> F:
    """Make ``function`` refuse an unknown keyword with :class:`UnknownOptionError` and a "did you mean".

    Python's own ``TypeError`` names the keyword but not the option meant; this names both.

        >>> @keyword_checked
        ... def estimate(contacts, *, parts=None, encoding=None): return parts
        >>> estimate(None, encodign="auto")
        Traceback (most recent call last):
        ...
        sendframe.errors.UnknownOptionError: estimate() got an unknown option 'encodign'. Did you mean 'encoding'?
    """
    signature = inspect.signature(function)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return function  # it takes **kwargs: it checks them itself
    known = [name for name, p in signature.parameters.items()
             if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    known_set = frozenset(known)
    where = function.__qualname__

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if not known_set.issuperset(kwargs):
            check_options(kwargs, known, where)
        return function(*args, **kwargs)

    return checked  # type: ignore[return-value]
