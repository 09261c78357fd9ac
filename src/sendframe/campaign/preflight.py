"""Preflight: every problem of a campaign as one DataFrame, before anything is sent (pandera style).

One row per problem: ``row`` (the contacts' index label, ``None`` for a campaign-wide problem),
``column``, ``rule``, ``message`` (plain English) and ``severity`` (``error``: the service would
reject the row or the request; ``warning``: it would be sent, maybe not as you expect).
An empty frame means the campaign can go.

Rules (the code the service would answer, docs/api-notes.md, in brackets):

=======================  ========  ============================================================
rule                     severity  when
=======================  ========  ============================================================
invalid_recipient        error     the phone number / email is not a valid recipient (102)
landline                 error     SMS, landing SMS, WhatsApp: the number's line cannot receive the message
                                   (fixed line, toll free, premium rate, ...: ``api.number_types``)
duplicate_recipient      warning   the recipient appears in an earlier row: it gets it twice
opted_out                error     the recipient is on the suppression list (108 if unsubscribed)
missing_variable         error     a ``{variable}`` has no value in this row (107)
too_many_parts           error     the text needs more parts than ``parts`` allows (105)
unencodable_characters   warning   characters the encoding cannot carry: sent as ``?``
shorten_not_url          error     a ``{x|shorten}`` value is not an http(s) URL (100)
format_not_number        warning   a ``{x|formatDotComma}`` value is not a number: sent unchanged
malformed_placeholder    error     a ``{...}`` that looks like a variable but is not one (``{First Name}``):
                                   it would be sent as written
invalid_template         error     the template cannot be parsed (an unknown filter) (100)
whatsapp_template        error     unknown WhatsApp template (140) or wrong number of field columns
whatsapp_field_missing   error     a WhatsApp field column has no value in this row (141)
=======================  ========  ============================================================

    >>> import pandas as pd, sendframe
    >>> contacts = pd.DataFrame({"phone": ["34600123456", "123"], "name": ["Ana", None]})
    >>> preflight(sendframe.sms("Hi {name}", sender="Shop"), contacts)[["row", "column", "rule"]].to_dict("records")
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'row': 1, 'column': 'phone', 'rule': 'invalid_recipient'},
     {'row': 1, 'column': 'name', 'rule': 'missing_variable'}]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from sendframe.api.number_types import number_types, receives_sms
from sendframe.api.recipient_columns import recipient_keys, sendable_keys
from sendframe.api.templates import WHATSAPP_FIELDS, WHATSAPP_TEMPLATES
from sendframe.campaign.columns import snake_name
from sendframe.campaign.measured import measure_sms
from sendframe.campaign.policy import key_codes, repeated_rows
from sendframe.campaign.preview import contacts_frame, render
from sendframe.campaign.problems import PROBLEM_COLUMNS, Problems
from sendframe.errors import InputError, TemplateError
from sendframe.options import keyword_checked
from sendframe.text import filters as text_filters
from sendframe.text import templates
from sendframe.text.filters import _ARROW_NUMBER  # text.filters.is_number's rule, written for Arrow
from sendframe.text.templates import SPECIALS, Placeholder, Template, column_to_arrow

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["PROBLEM_COLUMNS", "preflight"]

_PHONE_HINT = " (digits only, country code first; sendframe.read_contacts repairs most forms)"


def _recipient_problems(found: Problems, contacts: pd.DataFrame, kind: str, column: str, keys: pd.Series) -> None:
    values, valid = contacts[column], keys.notna().to_numpy(dtype=bool)  # a key exactly where the recipient is valid
    shown = values[~valid].astype("str")
    if f"{column}_raw" in contacts.columns:  # a number read_contacts could not repair: show what was written
        shown = shown.fillna(contacts[f"{column}_raw"][~valid].astype("str"))
    found.add("invalid_recipient", column, ~valid, value=shown.fillna("(empty)"),
              kind="email address" if kind == "email" else "phone number", hint="" if kind == "email" else _PHONE_HINT)
    codes = key_codes(keys)  # counting up in order of first appearance: code k's first row is the k-th first row
    repeated = repeated_rows(codes)
    first = np.flatnonzero(valid & ~repeated)[codes[repeated]]
    found.add("duplicate_recipient", column, repeated, value=values[repeated], first=contacts.index[first])


def _line_problems(found: Problems, contacts: pd.DataFrame, channel: str, column: str, keys: pd.Series) -> None:
    """Valid numbers whose line cannot receive a text message (``read_contacts``' ``phone_type`` when it has it)."""
    if column == "phone" and isinstance(contacts.get("phone_type", pd.Series()).dtype, pd.CategoricalDtype):
        types = contacts["phone_type"]
    else:
        types = number_types(keys)
    cannot = keys.notna().to_numpy(dtype=bool) & ~receives_sms(types)
    found.add("landline", column, cannot, value=contacts[column][cannot],
              line=types[cannot].astype("str").str.replace("_", " "),
              what="a WhatsApp message" if channel == "whatsapp" else "a text message")


def _suppressed_values(suppression: Any, wanted: str, default_region: str) -> set[str]:
    if suppression is None:
        return set()
    if isinstance(suppression, (str, os.PathLike)):
        suppression = pd.read_csv(suppression, dtype=str, encoding="utf-8-sig")
    if isinstance(suppression, pd.DataFrame):  # its phone/email column, else its first
        values = suppression[wanted] if wanted in suppression.columns else suppression.iloc[:, 0]
    elif isinstance(suppression, pd.Series):
        values = suppression
    elif isinstance(suppression, Iterable):
        values = pd.Series(list(suppression), dtype=object)
    else:
        raise InputError("suppression must be a CSV path, a DataFrame or a list of numbers/emails, "
                         f"not {type(suppression).__name__}.")
    return set(recipient_keys(values.dropna(), wanted, default_region=default_region).dropna())


def _variable_problems(found: Problems, contacts: pd.DataFrame, parsed: Template) -> None:
    for name in parsed.variables:
        if name in contacts.columns:
            found.add("missing_variable", name, contacts[name].isna().to_numpy(dtype=bool))
        else:
            found.add("missing_variable", name, np.ones(len(contacts), dtype=bool), message=(
                "{{{column}}} is used by the template but the contacts have no column {column!r} (107)."))
    uses = dict.fromkeys((p.name, p.filter) for p in parsed.pieces
                         if isinstance(p, Placeholder) and p.filter and p.name not in SPECIALS)
    for name, filter_name in uses:  # each (variable, filter) once, in order: values it cannot apply to
        values = contacts[name] if name in contacts.columns else None
        if values is not None and filter_name == "shorten":
            codes, distinct = pd.factorize(values, use_na_sentinel=True)  # True where missing, once per value
            bad = ~np.array([text_filters.is_shortenable(str(v)) for v in distinct] + [True], dtype=bool)[codes]
            found.add("shorten_not_url", name, bad, value=values[bad])
        elif values is not None and filter_name in ("formatDotComma", "formatCommaDot"):
            numbers = pc.match_substring_regex(column_to_arrow(values), _ARROW_NUMBER).fill_null(True)
            bad = ~numbers.to_numpy(zero_copy_only=False)
            found.add("format_not_number", name, bad, value=values[bad], filter=filter_name)


def _text_problems(found: Problems, measured: pd.DataFrame, encoding: str, parts: int) -> None:
    """Texts needing more than ``parts`` parts, and characters ``encoding`` cannot carry (``"auto"``: the
    cheapest per row, which loses nothing)."""
    needed = measured["parts"]
    over = needed.gt(parts).to_numpy(dtype=bool, na_value=False) & measured["text"].notna().to_numpy(dtype=bool)
    found.add("too_many_parts", "message", over, needed=needed[over].to_numpy(dtype=np.int64), parts=parts,
              encoding=measured["encoding"][over] if encoding == "auto" else encoding)
    if encoding in ("gsm", "gsm-pt"):
        lost = measured["unencodable_" + encoding.replace("-", "_")]  # a categorical: sized once per category
        losing = np.append(lost.cat.categories.str.len().to_numpy(), 0)[lost.cat.codes.to_numpy()] > 0
        found.add("unencodable_characters", "message", losing, encoding=encoding,
                  characters=lost[losing].map(lambda chars: ", ".join(map(repr, chars))))


def _whatsapp_problems(found: Problems, contacts: pd.DataFrame, template_id: Any,
                       field_columns: Mapping[str, Sequence[str]]) -> None:
    if template_id not in WHATSAPP_TEMPLATES:
        found.add("whatsapp_template", "templateId", template=template_id,
                  known=", ".join(str(t) for t in WHATSAPP_TEMPLATES))
        return
    for wire_name, needed in zip(WHATSAPP_FIELDS, WHATSAPP_TEMPLATES[template_id], strict=True):
        columns = list(field_columns.get(wire_name, ()))
        if len(columns) != needed:
            found.add("whatsapp_template", wire_name, message=(
                "template {template} needs {needed} {column} but {count} column(s) were given ({given}); every "
                "message would be rejected (141)."), template=template_id, needed=needed, count=len(columns),
                given=", ".join(columns) or "none")
            continue
        for column in columns:
            missing = contacts[column].isna().to_numpy(dtype=bool) if column in contacts.columns else np.ones(
                len(contacts), dtype=bool)
            found.add("whatsapp_field_missing", column, missing, wire=wire_name)


@keyword_checked
def preflight(msg: Message, contacts: pd.DataFrame, *, suppression: Any = None, measured: pd.DataFrame | None = None,
              keys: pd.Series | None = None) -> pd.DataFrame:
    """Every problem of sending ``msg`` to ``contacts``, one row each (:meth:`sendframe.Message.preflight`'s
    pandas answer: its settings are the message's).

    ``suppression`` (instead of the message's) is a CSV path (a ``phone``/``email`` column, else the first),
    a DataFrame or an iterable of numbers / emails; numbers are normalised like :func:`sendframe.read_contacts`
    does.
    Under ``encoding="auto"`` each row is in the cheapest encoding that carries it, as the estimate chooses it
    (so no character is lost, and parts are counted in that encoding). A recipient is valid when it has a key
    (:func:`~sendframe.api.recipient_columns.sendable_keys`). ``measured``: the text engine's
    :func:`~sendframe.text.measure.measure_frame` of these rows and template (``unencodable=True``), when the
    caller already has it (as :meth:`sendframe.Message.prepare` does), so the text is not measured twice;
    ``keys``: the recipient column's :func:`~sendframe.api.recipient_columns.sendable_keys`, likewise.

        >>> import pandas as pd, sendframe
        >>> preflight(sendframe.sms("Hi", sender="Shop"), pd.DataFrame({"phone": ["34600123456"]})).empty
        True
        >>> contacts = pd.DataFrame({"phone": ["34600123456"], "name": ["Zoë"]})
        >>> preflight(sendframe.sms("Hi {name}", sender="Shop", encoding="auto"), contacts).empty
        True
    """
    contacts_frame(contacts)
    channel, info, template, parts = msg.channel, msg.info, msg.template, msg.parts
    encoding, trans = msg.encoding or "gsm", int(msg.fields.get("trans", 0))
    found = Problems(contacts.index)
    column = msg.recipient_column(contacts)
    if keys is None:
        keys = sendable_keys(contacts[column], info.recipient)
    _recipient_problems(found, contacts, info.recipient, column, keys)
    if info.sends_sms or channel == "whatsapp":
        _line_problems(found, contacts, channel, column, keys)
    blocked = _suppressed_values(msg.suppression if suppression is None else suppression, info.recipient,
                                 msg.default_region)
    opted = keys.isin(blocked).to_numpy(dtype=bool)
    found.add("opted_out", column, opted, value=contacts[column][opted])
    if channel == "whatsapp":
        _whatsapp_problems(found, contacts, msg.fields.get("templateId"), msg.whatsapp_columns)
    elif template is not None:
        for written in templates.malformed_placeholders(template):
            name = written.strip("{} ").split("|")[0].strip()
            found.add("malformed_placeholder", "message", written=written, name=name, snake=snake_name(name))
        try:
            parsed = templates.parse(template)
        except TemplateError as exc:
            found.add("invalid_template", "message", error=exc)
            return found.frame()
        _variable_problems(found, contacts, parsed)
        if info.sends_sms:
            measured = measure_sms(contacts, msg, measured=measured)
            _text_problems(found, measured, encoding, parts)
        else:  # no text rule for these channels; rendering checks the arguments and values as before
            render(contacts, template, channel=channel, otp_config=msg.fields.get("otpConfig"), link_base=msg.link_base,
                   trans=trans)
    return found.frame()
