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
duplicate_recipient      warning   the recipient appears in an earlier row: it gets it twice
opted_out                error     the recipient is on the suppression list (108 if unsubscribed)
missing_variable         error     a ``{variable}`` has no value in this row (107)
too_many_parts           error     the text needs more parts than ``parts`` allows (105)
unencodable_characters   warning   characters the encoding cannot carry: sent as ``?``
shorten_not_url          error     a ``{x|shorten}`` value is not an http(s) URL (100)
format_not_number        warning   a ``{x|formatDotComma}`` value is not a number: sent unchanged
invalid_sender           error     the sender label breaks the spec's rule (100)
malformed_placeholder    error     a ``{...}`` that looks like a variable but is not one (``{First Name}``):
                                   it would be sent as written
invalid_template         error     the template cannot be parsed (an unknown filter) (100)
parts_out_of_range       error     ``parts`` outside 1-15 (SMS) or 1-8 (landing SMS) (100)
whatsapp_template        error     unknown WhatsApp template (140) or wrong number of field columns
whatsapp_field_missing   error     a WhatsApp field column has no value in this row (141)
=======================  ========  ============================================================

    >>> import pandas as pd
    >>> contacts = pd.DataFrame({"phone": ["34600123456", "123"], "name": ["Ana", None]})
    >>> preflight(contacts, "sms", "Hi {name}", sender="Shop")[["row", "column", "rule"]].to_dict("records")
    [{'row': 1, 'column': 'phone', 'rule': 'invalid_recipient'}, {'row': 1, 'column': 'name', 'rule': 'missing_variable'}]
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sendframe.api.recipients import (
    is_valid_email,
    is_valid_phone,
    normalise_phone_series,
)
from sendframe.api.templates import WHATSAPP_FIELDS, WHATSAPP_TEMPLATES
from sendframe.api.validation import sender_label_problem
from sendframe.campaign.columns import recipient_column
from sendframe.campaign.estimate import foreign_characters
from sendframe.campaign.preview import render
from sendframe.channels import channel as channel_info
from sendframe.errors import InputError, TemplateError
from sendframe.options import keyword_checked
from sendframe.text import filters as text_filters
from sendframe.text import templates
from sendframe.text.parts import sms_parts_series
from sendframe.text.templates import SPECIALS, Placeholder
from sendframe.scale.frames import preflight_partitions
from sendframe.scale.runtime import is_dask_frame

__all__ = ["PROBLEM_COLUMNS", "preflight"]

PROBLEM_COLUMNS: tuple[str, ...] = ("row", "column", "rule", "message", "severity")
_MAX_PARTS = {"sms": 15, "landingsms": 8}
_SMS_CHANNELS = ("sms", "landingsms")
_CHANNELS = ("sms", "mailing", "voice", "voiceAudio", "landingsms", "whatsapp")
_RULE_ORDER = (
    "invalid_sender", "parts_out_of_range", "invalid_template", "malformed_placeholder", "whatsapp_template", "invalid_recipient", "duplicate_recipient",
    "opted_out", "missing_variable", "whatsapp_field_missing", "shorten_not_url", "format_not_number",
    "too_many_parts", "unencodable_characters",
)  # fmt: skip


class _Problems:
    """Collects problems rule by rule as column arrays (no per-row Python for the common rules)."""

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        self.chunks: list[pd.DataFrame] = []

    def rows(self, mask: np.ndarray, column: str, rule: str, messages: Sequence[str] | np.ndarray, severity: str = "error") -> None:
        positions = np.flatnonzero(mask)
        if not len(positions):
            return
        messages = np.asarray(messages, dtype=object)
        if messages.shape == (len(self.index),):
            messages = messages[positions]
        self.chunks.append(
            pd.DataFrame({"position": positions, "row": self.index[positions].to_numpy(dtype=object), "column": column,
                          "rule": rule, "message": messages, "severity": severity})
        )

    def campaign(self, column: str, rule: str, message: str, severity: str = "error") -> None:
        self.chunks.append(pd.DataFrame({"position": [-1], "row": [None], "column": [column], "rule": [rule],
                                         "message": [message], "severity": [severity]}))

    def frame(self) -> pd.DataFrame:
        if not self.chunks:
            empty = {name: pd.Series([], dtype=object if name == "row" else "str") for name in PROBLEM_COLUMNS}
            return pd.DataFrame(empty)
        out = pd.concat(self.chunks, ignore_index=True)
        out["rule_order"] = out["rule"].map({rule: i for i, rule in enumerate(_RULE_ORDER)})
        out = out.sort_values(["position", "rule_order"], kind="stable").reset_index(drop=True)
        out = out[list(PROBLEM_COLUMNS)]
        for name in PROBLEM_COLUMNS[1:]:
            out[name] = out[name].astype("str")
        return out


def _snake(written: str) -> str:
    name = written.strip("{} ").split("|")[0].strip()
    return re.sub(r"[^0-9A-Za-z_]+", "_", unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()).strip("_").lower() or "name"


def _labels(index: pd.Index, positions: np.ndarray) -> np.ndarray:
    return np.asarray([repr(label) for label in index[positions]], dtype=object)


def _recipient_problems(found: _Problems, contacts: pd.DataFrame, channel: str, column: str) -> pd.Series:
    values = contacts[column]
    kind = "email address" if channel == "mailing" else "phone number"
    rule = is_valid_email if channel == "mailing" else is_valid_phone
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    valid = np.array([bool(rule(v)) for v in uniques] + [False], dtype=bool)[codes]
    shown = values.astype("str").fillna("(empty)").to_numpy(dtype=object)
    hint = "" if channel == "mailing" else " (digits only, country code first; sendframe.read_contacts repairs most forms)"
    raw_column = f"{column}_raw"
    if raw_column in contacts.columns:  # a number read_contacts could not repair: show what was written
        raw = contacts[raw_column].astype("str").fillna("(empty)").to_numpy(dtype=object)
        shown = np.where(values.isna().to_numpy(), raw, shown)
    bad = ~valid
    found.rows(bad, column, "invalid_recipient", [
        f"{column}: {s!r} is not a valid {kind}{hint}; the service would reject this row (102)." for s in shown[bad]])
    key = values.str.lower() if channel == "mailing" else values
    repeated = key.duplicated(keep="first").to_numpy(dtype=bool, na_value=False) & valid
    if repeated.any():
        first_position = pd.Series(np.arange(len(key)), index=key.index).groupby(key.to_numpy(), sort=False).transform("first")
        firsts = _labels(contacts.index, first_position.to_numpy()[repeated])
        msgs = np.empty(len(key), dtype=object)
        msgs[repeated] = [f"{column}: {v} already appears in row {f}; it would receive the message twice."
                          for v, f in zip(values[repeated], firsts, strict=True)]
        found.rows(repeated, column, "duplicate_recipient", msgs, "warning")
    return pd.Series(valid, index=contacts.index)


def _suppressed_values(suppression: Any, channel: str, default_region: str) -> set[str]:
    if suppression is None:
        return set()
    if isinstance(suppression, (str, os.PathLike)):
        table = pd.read_csv(suppression, dtype=str, encoding="utf-8-sig")
        wanted = "email" if channel == "mailing" else "phone"
        column = wanted if wanted in table.columns else table.columns[0]
        values = table[column]
    elif isinstance(suppression, pd.DataFrame):
        wanted = "email" if channel == "mailing" else "phone"
        values = suppression[wanted] if wanted in suppression.columns else suppression.iloc[:, 0]
    elif isinstance(suppression, pd.Series):
        values = suppression
    elif isinstance(suppression, Iterable):
        values = pd.Series(list(suppression), dtype=object)
    else:
        raise InputError(f"suppression must be a CSV path, a DataFrame or a list of numbers/emails, not {type(suppression).__name__}.")
    values = values.dropna()
    if channel == "mailing":
        return set(values.astype(str).str.strip().str.lower())
    return set(normalise_phone_series(values.astype(object), default_region).dropna())


def _variable_problems(found: _Problems, contacts: pd.DataFrame, parsed: Any, template: str) -> None:
    for name in parsed.variables:
        if name in contacts.columns:
            missing = contacts[name].isna().to_numpy(dtype=bool)
        else:
            missing = np.ones(len(contacts), dtype=bool)
        found.rows(missing, name, "missing_variable",
                   np.full(len(contacts), f"{{{name}}} has no value in this row; the service would not send it (107)."
                           if name in contacts.columns else
                           f"{{{name}}} is used by the template but the contacts have no column {name!r} (107).", dtype=object))
    for name, filter_name in _filter_uses(parsed, template):
        if name not in contacts.columns:
            continue
        values = contacts[name]
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        if filter_name == "shorten":
            ok = np.array([text_filters.is_shortenable(str(v)) for v in uniques] + [True], dtype=bool)[codes]
            found.rows(~ok, name, "shorten_not_url", [
                f"{name}: {v!r} is not an http(s) URL, so {{{name}|shorten}} cannot shorten it; the service would reject this row (100)."
                for v in values[~ok]])
        elif filter_name in ("formatDotComma", "formatCommaDot"):
            ok = np.array([_is_number(str(v)) for v in uniques] + [True], dtype=bool)[codes]
            found.rows(~ok, name, "format_not_number", [
                f"{name}: {v!r} is not a number (digits with an optional - and . decimals), so {{{name}|{filter_name}}} leaves it unchanged."
                for v in values[~ok]], "warning")


def _is_number(value: str) -> bool:
    rule = getattr(text_filters, "is_number", None)
    if rule is not None:
        return bool(rule(value))
    return text_filters._NUMBER.fullmatch(value) is not None  # the filters' own number rule


def _filter_uses(parsed: Any, template: str) -> list[tuple[str, str]]:
    """Distinct (variable, filter) pairs of the template, in order, specials left out."""
    pairs = (
        (piece.name, piece.filter)
        for piece in parsed.pieces
        if isinstance(piece, Placeholder) and piece.filter and piece.name not in SPECIALS
    )
    return list(dict.fromkeys(pairs))


def _text_problems(found: _Problems, contacts: pd.DataFrame, text: pd.Series, channel: str, encoding: str, parts: int) -> None:
    has_text = text.notna().to_numpy(dtype=bool)
    if channel not in _SMS_CHANNELS:
        return
    needed = sms_parts_series(text, encoding)
    over = needed.gt(parts).to_numpy(dtype=bool, na_value=False) & has_text
    if over.any():
        found.rows(over, "message", "too_many_parts", [
            f"the text needs {n} parts in {encoding} but parts={parts}; the service would answer 105 for this row."
            for n in needed[over]])
    lost = foreign_characters(text, encoding).fillna("")
    losing = lost.str.len().gt(0).to_numpy(dtype=bool)
    if losing.any():
        found.rows(losing, "message", "unencodable_characters", [
            f"{encoding} cannot carry {', '.join(repr(c) for c in chars)}: sent as '?'. Use encoding='utf-16' or trans=1."
            for chars in lost[losing]], "warning")


def _whatsapp_problems(found: _Problems, contacts: pd.DataFrame, template_id: Any, field_columns: Mapping[str, Sequence[str]]) -> None:
    if template_id not in WHATSAPP_TEMPLATES:
        known = ", ".join(str(t) for t in WHATSAPP_TEMPLATES)
        found.campaign("templateId", "whatsapp_template", f"WhatsApp template {template_id!r} is not known (known: {known}); the service would answer 140.")
        return
    for wire_name, needed in zip(WHATSAPP_FIELDS, WHATSAPP_TEMPLATES[template_id], strict=True):
        columns = list(field_columns.get(wire_name, ()))
        if len(columns) != needed:
            found.campaign(wire_name, "whatsapp_template",
                           f"template {template_id} needs {needed} {wire_name} but {len(columns)} column(s) were given ({', '.join(columns) or 'none'}); every message would be rejected (141).")
            continue
        for column in columns:
            missing = contacts[column].isna().to_numpy(dtype=bool) if column in contacts.columns else np.ones(len(contacts), dtype=bool)
            found.rows(missing, column, "whatsapp_field_missing",
                       np.full(len(contacts), f"{wire_name} column {column!r} has no value in this row; the service would reject it (141).", dtype=object))


@keyword_checked
def preflight(
    contacts: pd.DataFrame,
    channel: str,
    template: str | None = None,
    *,
    sender: str | None = None,
    parts: int = 1,
    encoding: str = "gsm",
    trans: int = 0,
    suppression: Any = None,
    whatsapp_template: int | None = None,
    header_fields: Sequence[str] = (),
    body_fields: Sequence[str] = (),
    cta_fields: Sequence[str] = (),
    to_column: str | None = None,
    default_region: str = "ES",
    otp_config: Mapping[str, Any] | None = None,
    link_base: str | None = None,
) -> pd.DataFrame:
    """Every problem of sending ``template`` to ``contacts`` on ``channel``, one row each.

    ``suppression`` is a CSV path (a ``phone``/``email`` column, else the first), a DataFrame or an
    iterable of numbers / emails; numbers are normalised like :func:`sendframe.read_contacts` does.
    For WhatsApp give ``whatsapp_template`` and the columns of each positional array
    (``header_fields``, ``body_fields``, ``cta_fields``); ``template`` is not used. The sender
    label rule is the models' own (:func:`sendframe.api.validation.sender_label_problem`).

        >>> import pandas as pd
        >>> preflight(pd.DataFrame({"phone": ["34600123456"]}), "sms", "Hi", sender="Shop").empty
        True
    """

    if is_dask_frame(contacts):  # lazily, partition by partition; repeats found across partitions (sendframe.scale)
        return preflight_partitions(preflight, contacts, channel, template, sender=sender, parts=parts, encoding=encoding, trans=trans, suppression=suppression, whatsapp_template=whatsapp_template, header_fields=header_fields, body_fields=body_fields, cta_fields=cta_fields, to_column=to_column, default_region=default_region, otp_config=otp_config, link_base=link_base)
    if not isinstance(contacts, pd.DataFrame):
        raise InputError(f"contacts must be a DataFrame (see sendframe.read_contacts), not {type(contacts).__name__}.")
    if channel not in _CHANNELS:
        raise InputError(f"Unknown channel {channel!r}: use one of {', '.join(_CHANNELS)}.")
    found = _Problems(contacts.index)
    if channel in _SMS_CHANNELS:
        if sender is None or sender_label_problem(sender):
            found.campaign("from", "invalid_sender", f"the sender label {sender_label_problem(sender) if sender is not None else 'is missing'}; the service would reject the request (100).")
        if isinstance(parts, bool) or not isinstance(parts, int) or not 1 <= parts <= _MAX_PARTS[channel]:
            found.campaign("parts", "parts_out_of_range", f"parts must be between 1 and {_MAX_PARTS[channel]} for {channel} (got {parts!r}); the service would reject the request (100).")
            parts = _MAX_PARTS[channel]
    column = recipient_column(contacts, channel_info(channel).recipient, to_column, channel=channel)
    valid = _recipient_problems(found, contacts, channel, column)
    blocked = _suppressed_values(suppression, channel, default_region)
    if blocked:
        key = contacts[column].str.lower() if channel == "mailing" else contacts[column]
        opted = key.isin(blocked).to_numpy(dtype=bool) & valid.to_numpy()
        found.rows(opted, column, "opted_out", [f"{column}: {v} is on the suppression list (opted out); do not send to it." for v in contacts[column][opted]])
    if channel == "whatsapp":
        fields = {"headerFields": header_fields, "bodyFields": body_fields, "callToActionFields": cta_fields}
        _whatsapp_problems(found, contacts, whatsapp_template, fields)
    elif template is not None:
        for written in templates.malformed_placeholders(template):
            found.campaign("message", "malformed_placeholder",
                           f"{written} is not a variable (a name holds letters, digits, _ . - and no spaces; a filter "
                           f"follows one |), so it would be sent as written. Rename the column, e.g. "
                           f"contacts.rename(columns={{{written.strip('{} ').split('|')[0].strip()!r}: "
                           f"{_snake(written)!r}}}), and write {{{_snake(written)}}}.")
        try:
            parsed = templates.parse(template)
        except TemplateError as exc:
            found.campaign("message", "invalid_template", f"{exc} The service would reject the request (100).")
            return found.frame()
        _variable_problems(found, contacts, parsed, template)
        text = render(contacts, template, channel=channel, otp_config=otp_config, link_base=link_base, trans=trans)
        _text_problems(found, contacts, text, channel, encoding, parts)
    return found.frame()
