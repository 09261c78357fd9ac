"""Every option of each channel in one table: what ``sms()``, ``send_sms()``, ``sendframe send`` and the Composer take.

The table is read from the code that uses the options, so it cannot drift from it: the
constructor's own parameters (``sms(message, sender)``), the channel's request fields (the
service's models), the message's settings (:data:`~sendframe.campaign.message.MESSAGE_OPTIONS`)
and the options of a send (:class:`~sendframe.campaign.send.SendOptions`, what :meth:`sendframe.Message.send`
takes). The one-call functions, the CLI's flags and the Composer's inputs are spelled from it. Each
option's help is written once: a setting's in its :class:`~sendframe.campaign.message.Message` field, the
others' as an item of the docstring of :func:`~sendframe.campaign.message.message` or
:class:`~sendframe.campaign.send.SendOptions`.

    >>> [(o.name, o.default, o.role) for o in channel_options("voiceAudio")][:3]
    [('audio_url', None, 'argument'), ('to', None, 'setting'), ('link_base', None, 'setting')]
    >>> option_names("sms", "send")[:3]
    ('client', 'ledger', 'keep')
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pydantic

from sendframe.api.models import REQUEST_MODELS
from sendframe.campaign.message import CONSTRUCTORS, MESSAGE_OPTIONS, Message, message
from sendframe.campaign.message_options import CHANNEL_LIMITED
from sendframe.campaign.send import SendOptions
from sendframe.channels import channel
from sendframe.options import check_options, request_field_names

__all__ = ["STORED_TEMPLATES", "OptionSpec", "channel_help", "channel_options", "missing_options",
           "option_names", "preview_placeholders", "split_options", "text_option"]

# the options naming a template stored in the service: given one, a message needs no text of its own
STORED_TEMPLATES = ("template_id", "template_v2_id")
# what a preview puts in a required option it has not been given, so the text shows before the message is complete
_PREVIEW_PLACEHOLDERS: dict[str, Any] = {
    "sender": "Preview", "subject": "(subject)", "from_email": "preview@example.com", "language": "en_GB",
    "gender": "F", "audio_url": "https://example.com/audio.mp3", "template_id": 1001}


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """One option of a channel: its name, the library's default, where it goes, its kind of value."""

    name: str
    default: Any
    role: str
    """``argument`` (the constructor's own), ``field`` (a request field), ``setting`` (of the message) or ``send``."""
    value: str
    """``bool``, ``int``, ``float``, ``text``, ``list`` (of names), ``pair``, ``structure`` (JSON) or ``object``."""
    help: str
    required: bool = False


@functools.cache
def channel_options(channel_name: str) -> tuple[OptionSpec, ...]:
    """Every option of ``channel_name``, in order: the constructor's, request fields, settings, then send's.

        >>> spec = {o.name: o for o in channel_options("sms")}
        >>> spec["parts"].default, spec["encoding"].role, spec["batch_size"].default, spec["message"].required
        (1, 'setting', 500, True)
    """
    info = channel(channel_name)
    wire = request_field_names(info.name)
    specs: dict[str, OptionSpec] = {}
    settings = {f.name: f for f in dataclasses.fields(Message)}
    documented = _help_texts()

    def add(name: str, default: Any, role: str, hint: Any, required: bool = False) -> None:
        if name not in specs:
            own = settings[name].metadata.get("help") if name in settings else None  # a Message setting's
            text = own or documented.get(name, f"the request's {wire.get(name, name)} (see the API spec)")
            specs[name] = OptionSpec(name, default, role, _value(hint, default), text, required)

    constructor = CONSTRUCTORS[info.name]
    hints = typing.get_type_hints(constructor)
    for name, parameter in inspect.signature(constructor).parameters.items():
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD:
            empty = parameter.default is inspect.Parameter.empty
            add(name, None if empty else parameter.default, "argument", hints.get(name), empty)
    declared = {**typing.get_type_hints(SendOptions), **typing.get_type_hints(Message)}  # suppression: the setting's
    for name in ("encoding", *MESSAGE_OPTIONS):  # settings before fields: they own encoding and notification_url
        if name not in CHANNEL_LIMITED or CHANNEL_LIMITED[name](info):
            add(name, settings[name].default, "setting", declared[name])
    for option, _ in info.column_fields:  # whatsapp
        add(option, None, "setting", list[str])
    for name, model_field in REQUEST_MODELS[info.name].model_fields.items():
        if name in wire:  # not those built from the contacts (to, sub, messages)
            add(name, model_field.default, "field", model_field.annotation)
    for send_option in dataclasses.fields(SendOptions):
        add(send_option.name, send_option.default, "send", declared[send_option.name])
    return tuple(specs.values())


def option_names(channel_name: str, *roles: str) -> tuple[str, ...]:
    """The names of ``channel_name``'s options with one of ``roles`` (all of them when none is given).

        >>> option_names("whatsapp", "argument")
        ('template_id', 'sender')
    """
    return tuple(o.name for o in channel_options(channel_name) if not roles or o.role in roles)


def text_option(channel_name: str) -> str | None:
    """The option holding the channel's text template (the last of its template fields), if it has one.

        >>> text_option("mailing"), text_option("sms"), text_option("whatsapp")
        ('body', 'message', None)
    """
    fields = channel(channel_name).template_fields
    return fields[-1] if fields else None


def channel_help(channel_name: str, name: str) -> str:
    """The help of ``channel_name``'s option ``name`` as it reads for that channel: of help written per channel
    (``sms/landingsms: ...; whatsapp: ...``), the channel's part.

        >>> channel_help("whatsapp", "sender"), channel_help("mailing", "from_email")
        ('the registered sender number', 'a validated sender address')
    """
    text = next(o.help for o in channel_options(channel_name) if o.name == name)
    parts = re.findall(r"(?:^|; )([\w/]+): ([^;]*)", text)
    return next((part for names, part in parts if channel_name in names.split("/")), text)


def missing_options(channel_name: str, values: Mapping[str, Any]) -> list[str]:
    """The options a message of ``channel_name`` cannot go without that ``values`` (name -> value) leaves empty
    (None or ""): the constructor's required ones, and the text unless a stored template stands in for it.

        >>> missing_options("mailing", {"subject": "Hi", "from_email": ""})
        ['body', 'from_email']
        >>> missing_options("mailing", {"subject": "Hi", "from_email": "a@b.co", "template_id": 7})
        []
    """
    text = None if any(values.get(name) for name in STORED_TEMPLATES) else text_option(channel_name)
    needed = [o.name for o in channel_options(channel_name) if o.required or o.name == text]
    return [name for name in needed if values.get(name) in (None, "")]


def preview_placeholders(channel_name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """What a preview puts in the options of :func:`missing_options` other than the text, so the text shows
    before the message is complete (a send still refuses it).

        >>> preview_placeholders("sms", {"message": "Hi"})
        {'sender': 'Preview'}
    """
    missing = missing_options(channel_name, values)
    return {name: value for name, value in _PREVIEW_PLACEHOLDERS.items() if name in missing}


@functools.cache
def _help_texts() -> dict[str, str]:
    """Each documented option's help, from the ``- ``name``: help`` items of the docstrings of :func:`message` and
    :class:`SendOptions` (the first wins): help(), the reference and --help agree (a Message setting's: its field's)."""
    texts: dict[str, str] = {}
    for documented in (message, SendOptions):
        for name, text in re.findall(r"^- ``(\w+)``: (.*(?:\n  .*)*)", inspect.getdoc(documented) or "", re.M):
            texts.setdefault(name, " ".join(text.replace("``", "").split()))
    return texts


def _value(hint: Any, default: Any) -> str:
    """The kind of value a type hint describes (what a command-line flag parses it as)."""
    if hint is None or hint is Any:
        return "bool" if isinstance(default, bool) else "object"
    kinds = _kinds(hint) - {None}
    if len(kinds) != 1:
        return "list" if "list" in kinds else "object"
    return str(kinds.pop())


def _kinds(hint: Any) -> set[str | None]:
    """The kinds of value of each type a hint allows (None: ``None`` itself)."""
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    origin = typing.get_origin(hint) or hint
    if origin in (typing.Union, types.UnionType):
        return set().union(*map(_kinds, typing.get_args(hint)))
    if origin in (list, Iterable, Sequence):
        inner = typing.get_args(hint)
        return {"list" if not inner or _kinds(inner[0]) - {None} == {"text"} else "structure"}
    if origin is dict or (isinstance(origin, type) and issubclass(origin, pydantic.BaseModel)):
        return {"structure"}
    simple = {type(None): None, tuple: "pair", bool: "bool", int: "int", float: "float", str: "text"}
    return {simple.get(origin, "object") if isinstance(origin, type) else "object"}


def split_options(channel_name: str, options: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``options`` as (the message's, the send's), by the table; an unknown name raises with the closest known one.

    Request fields may also be spelled as the spec does (``campaignName``, ``from``).

        >>> split_options("sms", {"parts": 2, "dry_run": True}, "sendframe.send_sms")
        ({'parts': 2}, {'dry_run': True})
        >>> split_options("sms", {"dryrun": True}, "send_sms")
        Traceback (most recent call last):
        ...
        sendframe.errors.UnknownOptionError: send_sms() got an unknown option 'dryrun'. Did you mean 'dry_run'?
    """
    wire = request_field_names(channel(channel_name).name)
    check_options(options, [*option_names(channel_name), *wire], where)
    arguments = {wire[name]: name for name in option_names(channel_name, "argument") if name in wire}
    send = set(option_names(channel_name, "send"))
    message_options = {arguments.get(wire.get(k, ""), k): v for k, v in options.items() if k not in send}
    return message_options, {k: v for k, v in options.items() if k in send}
