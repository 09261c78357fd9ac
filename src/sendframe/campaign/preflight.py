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

The rules are data: :data:`RULES` holds each one's severity and message (a ``str.format`` template over
the fields its check gives), in the order a row's problems are listed. Each check finds rows as one
array operation and hands them to :class:`Problems`, which fills the messages (:func:`filled`: Arrow
joins the per-row values, a value shown as ``!r`` is written once per distinct value) and builds the
frame: campaign-wide problems first, then by row, each row's rules in :data:`RULES` order. A million
rows cost array work, not a Python loop.

    >>> import pandas as pd, sendframe
    >>> contacts = pd.DataFrame({"phone": ["34600123456", "123"], "name": ["Ana", None]})
    >>> preflight(sendframe.sms("Hi {name}", sender="Shop"), contacts)[["row", "column", "rule"]].to_dict("records")
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'row': 1, 'column': 'phone', 'rule': 'invalid_recipient'},
     {'row': 1, 'column': 'name', 'rule': 'missing_variable'}]
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.api.number_types import number_types, receives_sms
from sendframe.api.recipient_columns import recipient_keys, sendable_keys
from sendframe.api.templates import WHATSAPP_FIELDS, WHATSAPP_TEMPLATES
from sendframe.campaign.columns import find_recipient_column, snake_name
from sendframe.campaign.policy import key_codes, repeated_rows
from sendframe.campaign.preview import contacts_frame, measure_sms, render
from sendframe.campaign.tables import read_table
from sendframe.errors import InputError, TemplateError
from sendframe.options import keyword_checked
from sendframe.text.filters import _ARROW_NUMBER, is_shortenable  # _ARROW_NUMBER: is_number's rule, for Arrow
from sendframe.text.templates import SPECIALS, Placeholder, Template, column_to_arrow, malformed_placeholders, parse

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["PROBLEM_COLUMNS", "RULES", "preflight"]

_PHONE_HINT = " (digits only, country code first; sendframe.read_contacts repairs most forms)"


PROBLEM_COLUMNS: tuple[str, ...] = ("row", "column", "rule", "message", "severity")


class Rule(NamedTuple):
    severity: str
    message: str


RULES: dict[str, Rule] = {
    "invalid_template": Rule("error", "{error} The service would reject the request (100)."),
    "malformed_placeholder": Rule("error", (
        "{written} is not a variable (a name holds letters, digits, _ . - and no spaces; a filter follows one |), so "
        "it would be sent as written. Rename the column, e.g. contacts.rename(columns={{{name!r}: {snake!r}}}) or "
        "read them with read_contacts(..., names='snake'), and write {{{snake}}}.")),
    "whatsapp_template": Rule("error", (
        "WhatsApp template {template!r} is not known (known: {known}); the service would answer 140.")),
    "invalid_recipient": Rule("error", (
        "{column}: {value!r} is not a valid {kind}{hint}; the service would reject this row (102).")),
    "landline": Rule("error", (
        "{column}: {value} is a {line} number, which cannot receive {what}; a send leaves it out (skipped_landline) "
        "unless keep='landline'.")),
    "duplicate_recipient": Rule("warning", (
        "{column}: {value} already appears in row {first!r}; it would receive the message twice.")),
    "opted_out": Rule("error", "{column}: {value} is on the suppression list (opted out); do not send to it."),
    "missing_variable": Rule("error", "{{{column}}} has no value in this row; the service would not send it (107)."),
    "whatsapp_field_missing": Rule("error", (
        "{wire} column {column!r} has no value in this row; the service would reject it (141).")),
    "shorten_not_url": Rule("error", (
        "{column}: {value!r} is not an http(s) URL, so {{{column}|shorten}} cannot shorten it; the service would "
        "reject this row (100).")),
    "format_not_number": Rule("warning", (
        "{column}: {value!r} is not a number (digits with an optional - and . decimals), so {{{column}|{filter}}} "
        "leaves it unchanged.")),
    "too_many_parts": Rule("error", (
        "the text needs {needed} parts in {encoding} but parts={parts}; the service would answer 105 for this row.")),
    "unencodable_characters": Rule("warning", (
        "{encoding} cannot carry {characters}: sent as '?'. Use encoding='utf-16' or trans=1.")),
}
"""Each rule's severity and message template, in the order a row's problems are listed."""
_TEXT = pa.large_string()
_FORMAT = string.Formatter()
_PER_ROW = (pd.Series, pd.Index, np.ndarray, pa.Array)


class Problems:
    """Collects problems rule by rule as column arrays; messages are built only for the rows with a problem.

        >>> found = Problems(pd.Index(["a", "b"]))
        >>> found.add("opted_out", "phone", np.array([False, True]), value=pd.Series(["34600123456"]))
        >>> found.frame()[["row", "rule", "severity"]].to_dict("records")
        [{'row': 'b', 'rule': 'opted_out', 'severity': 'error'}]
    """

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        # per add: the row positions (-1: campaign-wide), the column, the rule, the messages
        self.found: list[tuple[np.ndarray, str, str, pa.Array]] = []

    def add(self, rule: str, column: str, rows: np.ndarray | None = None, message: str | None = None,
            **fields: Any) -> None:
        """Problems of the rows where ``rows`` holds (None: one campaign-wide problem), each with the rule's message
        (or ``message``) filled from ``column`` and ``fields`` (one value for all, or one per such row)."""
        positions = np.array([-1]) if rows is None else np.flatnonzero(rows)
        if len(positions):
            texts = filled(message or RULES[rule].message, len(positions), column=column, **fields)
            self.found.append((positions, str(column), rule, texts))

    def frame(self) -> pd.DataFrame:
        if not self.found:
            return pd.DataFrame({name: pd.Series([], dtype=object if name == "row" else "str")
                                 for name in PROBLEM_COLUMNS})
        positions, columns, rules, messages = zip(*self.found, strict=True)
        which = np.repeat(np.arange(len(rules)), [len(p) for p in positions])  # each problem's add
        at = np.concatenate(positions)
        # campaign problems first, then by row, each row's rules in RULES order (a stable sort: ties keep their order)
        order = np.lexsort((np.array([list(RULES).index(rule) for rule in rules])[which], at))
        which, at = pa.array(which[order]), at[order]
        rows = np.full(len(at), None, dtype=object)
        rows[at >= 0] = self.index[at[at >= 0]].to_numpy(dtype=object)
        shared = {"column": columns, "rule": rules, "severity": [RULES[rule].severity for rule in rules]}  # per add
        table = {name: pd.array(pa.array(texts, type=_TEXT).take(which), dtype="str") for name, texts in shared.items()}
        message = pa.chunked_array(messages, type=_TEXT).take(pa.array(order)).combine_chunks()
        # labels as pandas infers them (text labels make a str column), object when a campaign problem has none
        return pd.DataFrame({"row": pd.Series(rows, dtype=object if (at < 0).any() else None), **table,
                             "message": pd.array(message, dtype="str")})[list(PROBLEM_COLUMNS)]


def filled(template: str, count: int, /, **fields: Any) -> pa.Array:
    """``template.format(**fields)`` for each of ``count`` rows: a field is one value for all rows, or one per row
    (a Series, Index or array), written as ``astype("str")`` writes it, or once per distinct value when the
    template converts it (``{value!r}``).

        >>> filled("{value!r} in row {row}", 2, value=pd.Series(["a", "b"]), row=np.array([1, 2])).to_pylist()
        ["'a' in row 1", "'b' in row 2"]
    """
    pieces: list[pa.Scalar | pa.Array] = []
    for literal, name, spec, conversion in _FORMAT.parse(template):
        pieces.append(pa.scalar(literal, _TEXT))
        if name is None:
            continue
        value = fields[name]
        if not isinstance(value, _PER_ROW):
            pieces.append(pa.scalar(_formatted(value, conversion, spec), _TEXT))
            continue
        values = value.to_pandas() if isinstance(value, pa.Array) else pd.Series(value)
        if conversion == "r" and values.dtype.kind in "iu":  # an integer's repr is its digits
            conversion = None
        if conversion or spec:  # once per distinct value
            codes, distinct = pd.factorize(values)
            written = pa.array([_formatted(value, conversion, spec) for value in distinct], type=_TEXT)
            pieces.append(written.take(pa.array(codes)))
        else:
            array = pa.array(values.astype("str").array)
            pieces.append((array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array).cast(_TEXT))
    joined = pc.binary_join_element_wise(*pieces, pa.scalar("", _TEXT))
    return joined if isinstance(joined, pa.Array) else pa.repeat(joined, count)  # no per-row field: one text for all


def _formatted(value: Any, conversion: str | None, spec: str | None) -> str:
    return str(_FORMAT.format_field(_FORMAT.convert_field(value, conversion) if conversion else value, spec or ""))


def _recipient_problems(found: Problems, contacts: pd.DataFrame, kind: str, column: str, keys: pd.Series,
                        codes: np.ndarray) -> None:
    values, valid = contacts[column], keys.notna().to_numpy(dtype=bool)  # a key exactly where the recipient is valid
    shown = values[~valid].astype("str")
    if f"{column}_raw" in contacts.columns:  # a number read_contacts could not repair: show what was written
        shown = shown.fillna(contacts[f"{column}_raw"][~valid].astype("str"))
    found.add("invalid_recipient", column, ~valid, value=shown.fillna("(empty)"),
              kind="email address" if kind == "email" else "phone number", hint="" if kind == "email" else _PHONE_HINT)
    # codes count up in order of first appearance: code k's first row is the k-th first row
    repeated = repeated_rows(codes)
    first = np.flatnonzero(valid & ~repeated)[codes[repeated]]
    found.add("duplicate_recipient", column, repeated, value=values[repeated], first=contacts.index[first])


def _line_problems(found: Problems, contacts: pd.DataFrame, channel: str, column: str, keys: pd.Series) -> None:
    """Valid numbers whose line cannot receive a text message (``read_contacts``' ``phone_type`` when it has it)."""
    given = contacts.get("phone_type") if column == "phone" else None
    types = given if given is not None and isinstance(given.dtype, pd.CategoricalDtype) else number_types(keys)
    cannot = keys.notna().to_numpy(dtype=bool) & ~receives_sms(types)
    found.add("landline", column, cannot, value=contacts[column][cannot],
              line=types[cannot].astype("str").str.replace("_", " "),
              what="a WhatsApp message" if channel == "whatsapp" else "a text message")


def _suppressed_values(suppression: Any, wanted: str, default_region: str) -> set[str]:
    if suppression is None:
        return set()
    if isinstance(suppression, (str, os.PathLike)):
        suppression = read_table(suppression)
    if isinstance(suppression, pd.DataFrame):  # its phone/email column (under its usual names), else its first
        values = suppression[find_recipient_column(suppression, wanted) or suppression.columns[0]]
    elif isinstance(suppression, Iterable):
        values = pd.Series(list(suppression), dtype=object)
    else:
        raise InputError("suppression must be a CSV path, a DataFrame or a list of numbers/emails, "
                         f"not {type(suppression).__name__}.")
    return set(recipient_keys(values.dropna(), wanted, default_region=default_region).dropna())


def _missing(contacts: pd.DataFrame, column: str) -> np.ndarray:
    """The rows without a value in ``column``: every row when the contacts have no such column."""
    return contacts[column].isna().to_numpy(dtype=bool) if column in contacts.columns else np.ones(len(contacts), bool)


def _variable_problems(found: Problems, contacts: pd.DataFrame, parsed: Template) -> None:
    absent = "{{{column}}} is used by the template but the contacts have no column {column!r} (107)."
    for name in parsed.variables:
        found.add("missing_variable", name, _missing(contacts, name), None if name in contacts.columns else absent)
    uses = dict.fromkeys((p.name, p.filter) for p in parsed.pieces
                         if isinstance(p, Placeholder) and p.filter and p.name not in SPECIALS)
    for name, filter_name in uses:  # each (variable, filter) once, in order: values it cannot apply to
        values = contacts.get(name)
        if values is not None and filter_name == "shorten":
            codes, distinct = pd.factorize(values, use_na_sentinel=True)  # True where missing, once per value
            bad = ~np.array([is_shortenable(str(v)) for v in distinct] + [True], dtype=bool)[codes]
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
            found.add("whatsapp_field_missing", column, _missing(contacts, column), wire=wire_name)


@keyword_checked
def preflight(msg: Message, contacts: pd.DataFrame, *, suppression: Any = None, measured: pd.DataFrame | None = None,
              keys: pd.Series | None = None, codes: np.ndarray | None = None) -> pd.DataFrame:
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
    ``keys``: the recipient column's :func:`~sendframe.api.recipient_columns.sendable_keys`, likewise, and
    ``codes`` their :func:`~sendframe.campaign.policy.key_codes` (which the plan's repeats are found by too).

        >>> import pandas as pd, sendframe
        >>> preflight(sendframe.sms("Hi", sender="Shop"), pd.DataFrame({"phone": ["34600123456"]})).empty
        True
        >>> contacts = pd.DataFrame({"phone": ["34600123456"], "name": ["Zoë"]})
        >>> preflight(sendframe.sms("Hi {name}", sender="Shop", encoding="auto"), contacts).empty
        True
    """
    contacts_frame(contacts)
    channel, info, template = msg.channel, msg.info, msg.template
    found = Problems(contacts.index)
    column = msg.recipient_column(contacts)
    keys = sendable_keys(contacts[column], info.recipient) if keys is None else keys
    _recipient_problems(found, contacts, info.recipient, column, keys, key_codes(keys) if codes is None else codes)
    if info.sends_sms or channel == "whatsapp":
        _line_problems(found, contacts, channel, column, keys)
    blocked = _suppressed_values(msg.suppression if suppression is None else suppression, info.recipient,
                                 msg.default_region)
    opted = keys.isin(blocked).to_numpy(dtype=bool)
    found.add("opted_out", column, opted, value=contacts[column][opted])
    if channel == "whatsapp":
        _whatsapp_problems(found, contacts, msg.fields.get("templateId"), msg.whatsapp_columns)
    elif template is not None:
        for written in malformed_placeholders(template):
            name = written.strip("{} ").split("|")[0].strip()
            found.add("malformed_placeholder", "message", written=written, name=name, snake=snake_name(name))
        try:
            parsed = parse(template)
        except TemplateError as exc:
            found.add("invalid_template", "message", error=exc)
            return found.frame()
        _variable_problems(found, contacts, parsed)
        if info.sends_sms:
            _text_problems(found, measure_sms(contacts, msg, measured=measured), msg.encoding or "gsm", msg.parts)
        else:  # no text rule for these channels; rendering checks the arguments and values as before
            render(contacts, template, otp_config=msg.fields.get("otpConfig"), link_base=msg.link_base,
                   trans=int(msg.fields.get("trans", 0)))
    return found.frame()
