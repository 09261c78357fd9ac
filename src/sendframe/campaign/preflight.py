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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.api.number_types import number_types, receives_sms
from sendframe.api.recipient_columns import recipient_keys, sendable_keys
from sendframe.api.templates import WHATSAPP_FIELDS, WHATSAPP_TEMPLATES
from sendframe.campaign.columns import snake_name
from sendframe.campaign.measured import asked_encoding, measure_sms
from sendframe.campaign.preview import contacts_frame, render
from sendframe.campaign.problems import (
    PROBLEM_COLUMNS,
    Problems,
    joined,
    key_codes,
    label_texts,
    messages,
    text_array,
)
from sendframe.errors import InputError, TemplateError
from sendframe.options import keyword_checked
from sendframe.text import filters as text_filters
from sendframe.text import templates
from sendframe.text.filters import _ARROW_NUMBER  # text.filters.is_number's rule, written for Arrow
from sendframe.text.templates import SPECIALS, Placeholder, Template, column_to_arrow

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["PROBLEM_COLUMNS", "preflight"]

_TEXT = pa.large_string()
_PHONE_HINT = " (digits only, country code first; sendframe.read_contacts repairs most forms)"


def _snake(written: str) -> str:
    return snake_name(written.strip("{} ").split("|")[0].strip())


# ---------------------------------------------------------------- column helpers


def _per_distinct(values: pd.Series, rule: Callable[[str], bool]) -> np.ndarray:
    """``rule(str(value))`` for each row (True where missing), once per distinct value."""
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    return np.array([rule(str(v)) for v in distinct] + [True], dtype=bool)[codes]


def _numbers(values: pd.Series) -> np.ndarray:
    """Whether each value, as the template writes it, is a number to the format filters (True where missing):
    one regular expression over the column."""
    answer: np.ndarray = pc.match_substring_regex(column_to_arrow(values), _ARROW_NUMBER).fill_null(True).to_numpy(
        zero_copy_only=False)
    return answer


# ---------------------------------------------------------------- the rules


def _recipient_problems(found: Problems, contacts: pd.DataFrame, recipient: str, column: str,
                        keys: pd.Series) -> np.ndarray:
    values = contacts[column]
    kind, hint = ("email address", "") if recipient == "email" else ("phone number", _PHONE_HINT)
    valid = keys.notna().to_numpy(dtype=bool)  # the key is missing exactly where the recipient is not valid
    if not valid.all():
        bad = ~valid
        shown = text_array(values[bad]).fill_null("(empty)")
        raw_column = f"{column}_raw"
        if raw_column in contacts.columns:  # a number read_contacts could not repair: show what was written
            raw = text_array(contacts[raw_column][bad]).fill_null("(empty)")
            shown = pc.if_else(pa.array(values[bad].isna().to_numpy(dtype=bool)), raw, shown)
        found.rows(bad, column, "invalid_recipient", messages(
            shown, lambda s: f"{column}: {s!r} is not a valid {kind}{hint}; the service would reject this row (102)."))
    codes = key_codes(keys)  # counting up in order of first appearance: code k's first row is the k-th first row
    repeated = pd.Series(codes).duplicated().to_numpy() & valid
    if repeated.any():
        first = np.flatnonzero(valid & ~repeated)[codes[repeated]]
        found.rows(repeated, column, "duplicate_recipient", joined(
            f"{column}: ", text_array(values[repeated]), " already appears in row ",
            label_texts(contacts.index, first), "; it would receive the message twice."), "warning")
    return valid


def _line_problems(found: Problems, contacts: pd.DataFrame, channel: str, column: str, valid: np.ndarray,
                   keys: pd.Series) -> None:
    """Valid numbers whose line cannot receive a text message (``read_contacts``' ``phone_type`` when it has it)."""
    if column == "phone" and isinstance(contacts.get("phone_type", pd.Series()).dtype, pd.CategoricalDtype):
        types = contacts["phone_type"]
    else:
        types = number_types(keys)
    cannot = valid & ~receives_sms(types)
    if cannot.any():
        what = "a WhatsApp message" if channel == "whatsapp" else "a text message"
        found.rows(cannot, column, "landline", joined(
            f"{column}: ", text_array(contacts[column][cannot]), " is a ",
            text_array(types[cannot].astype("str").str.replace("_", " ")),
            f" number, which cannot receive {what}; a send leaves it out (skipped_landline) unless "
            "keep='landline'."))


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


def _opted_out(found: Problems, contacts: pd.DataFrame, column: str, keys: pd.Series, blocked: set[str]) -> None:
    opted = keys.isin(blocked).to_numpy(dtype=bool)
    if opted.any():
        found.rows(opted, column, "opted_out", messages(contacts[column][opted], lambda v: (
            f"{column}: {v} is on the suppression list (opted out); do not send to it.")))


def _variable_problems(found: Problems, contacts: pd.DataFrame, parsed: Template) -> None:
    for name in parsed.variables:
        if name in contacts.columns:
            found.rows(contacts[name].isna().to_numpy(dtype=bool), name, "missing_variable",
                       f"{{{name}}} has no value in this row; the service would not send it (107).")
        else:
            found.rows(np.ones(len(contacts), dtype=bool), name, "missing_variable",
                       f"{{{name}}} is used by the template but the contacts have no column {name!r} (107).")
    uses = dict.fromkeys((p.name, p.filter) for p in parsed.pieces
                         if isinstance(p, Placeholder) and p.filter and p.name not in SPECIALS)
    for name, filter_name in uses:  # each (variable, filter) once, in order
        if name in contacts.columns:
            _filter_problems(found, contacts[name], name, filter_name)


def _filter_problems(found: Problems, values: pd.Series, name: str, filter_name: str) -> None:
    """Values a filter cannot apply to: not a URL for ``shorten``, not a number for the number formats."""
    if filter_name == "shorten":
        bad = ~_per_distinct(values, text_filters.is_shortenable)
        if bad.any():
            found.rows(bad, name, "shorten_not_url", messages(values[bad], lambda v: (
                f"{name}: {v!r} is not an http(s) URL, so {{{name}|shorten}} cannot shorten it; "
                "the service would reject this row (100).")))
    elif filter_name in ("formatDotComma", "formatCommaDot"):
        bad = ~_numbers(values)
        if bad.any():
            found.rows(bad, name, "format_not_number", messages(values[bad], lambda v: (
                f"{name}: {v!r} is not a number (digits with an optional - and . decimals), so "
                f"{{{name}|{filter_name}}} leaves it unchanged.")), "warning")


def _text_problems(found: Problems, measured: pd.DataFrame, encoding: str, parts: int) -> None:
    """Texts needing more than ``parts`` parts, and characters ``encoding`` cannot carry (``"auto"``: the
    cheapest per row, which loses nothing)."""
    needed = measured["parts"]
    over = needed.gt(parts).to_numpy(dtype=bool, na_value=False) & measured["text"].notna().to_numpy(dtype=bool)
    if over.any():
        names = text_array(measured["encoding"][over]) if encoding == "auto" else encoding
        found.rows(over, "message", "too_many_parts", joined(
            "the text needs ", pc.cast(pa.array(needed[over].to_numpy(dtype=np.int64)), _TEXT), " parts in ", names,
            f" but parts={parts}; the service would answer 105 for this row."))
    if encoding not in ("gsm", "gsm-pt"):
        return
    lost = measured["unencodable_" + encoding.replace("-", "_")]  # a categorical: sized once per category
    losing = np.append(lost.cat.categories.str.len().to_numpy(), 0)[lost.cat.codes.to_numpy()] > 0
    if losing.any():
        found.rows(losing, "message", "unencodable_characters", messages(lost[losing], lambda chars: (
            f"{encoding} cannot carry {', '.join(repr(c) for c in chars)}: sent as '?'. "
            "Use encoding='utf-16' or trans=1.")), "warning")


def _whatsapp_problems(found: Problems, contacts: pd.DataFrame, template_id: Any,
                       field_columns: Mapping[str, Sequence[str]]) -> None:
    if template_id not in WHATSAPP_TEMPLATES:
        known = ", ".join(str(t) for t in WHATSAPP_TEMPLATES)
        found.campaign("templateId", "whatsapp_template",
                       f"WhatsApp template {template_id!r} is not known (known: {known}); "
                       "the service would answer 140.")
        return
    for wire_name, needed in zip(WHATSAPP_FIELDS, WHATSAPP_TEMPLATES[template_id], strict=True):
        columns = list(field_columns.get(wire_name, ()))
        if len(columns) != needed:
            found.campaign(wire_name, "whatsapp_template",
                           f"template {template_id} needs {needed} {wire_name} but {len(columns)} column(s) were "
                           f"given ({', '.join(columns) or 'none'}); every message would be rejected (141).")
            continue
        for column in columns:
            if column in contacts.columns:
                missing = contacts[column].isna().to_numpy(dtype=bool)
            else:
                missing = np.ones(len(contacts), dtype=bool)
            found.rows(missing, column, "whatsapp_field_missing",
                       f"{wire_name} column {column!r} has no value in this row; the service would reject it (141).")


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
    valid = _recipient_problems(found, contacts, info.recipient, column, keys)
    if info.sends_sms or channel == "whatsapp":
        _line_problems(found, contacts, channel, column, valid, keys)
    blocked = _suppressed_values(msg.suppression if suppression is None else suppression, info.recipient,
                                 msg.default_region)
    if blocked:
        _opted_out(found, contacts, column, keys, blocked)
    if channel == "whatsapp":
        _whatsapp_problems(found, contacts, msg.fields.get("templateId"), msg.whatsapp_columns)
    elif template is not None:
        for written in templates.malformed_placeholders(template):
            found.campaign("message", "malformed_placeholder",
                           f"{written} is not a variable (a name holds letters, digits, _ . - and no spaces; a filter "
                           f"follows one |), so it would be sent as written. Rename the column, e.g. "
                           f"contacts.rename(columns={{{written.strip('{} ').split('|')[0].strip()!r}: "
                           f"{_snake(written)!r}}}) or read them with read_contacts(..., names='snake'), and write "
                           f"{{{_snake(written)}}}.")
        try:
            parsed = templates.parse(template)
        except TemplateError as exc:
            found.campaign("message", "invalid_template", f"{exc} The service would reject the request (100).")
            return found.frame()
        _variable_problems(found, contacts, parsed)
        if info.sends_sms:
            measured = measure_sms(contacts, template, encoding=asked_encoding(encoding), trans=trans, channel=channel,
                                   link_base=msg.link_base, otp_config=msg.fields.get("otpConfig"), measured=measured)
            _text_problems(found, measured, encoding, parts)
        else:  # no text rule for these channels; rendering checks the arguments and values as before
            render(contacts, template, channel=channel, otp_config=msg.fields.get("otpConfig"), link_base=msg.link_base,
                   trans=trans)
    return found.frame()
