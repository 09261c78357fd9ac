"""What an analyst writes without sendframe: the baselines the benchmarks measure themselves against.

Plain Python over the rows, the way a competent analyst does it in a notebook: ``pandas.read_csv(dtype=str)``,
then per row ``phonenumbers`` (parse, is_valid_number, E.164), ``str`` methods to build the text, a set of
the GSM characters (pasted from the standard: the tables are data, no sendframe function is called), parts by
arithmetic, a price per calling code from the price list, a ``set`` of recipients already seen, and
``httpx`` for the requests.

    rows = read_rows("contacts.csv")
    plan = prepare(rows, unsub_link="https://sndf.io/u/xxxxxxxxxxxx")   # recipients, texts, parts, costs
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd
import phonenumbers

from sendframe.text.encodings import BASIC_CHARS, GSM_EXTENSION_TABLE, GSM_PT_SHIFT_TABLE

__all__ = ["GSM", "GSM_PT", "Prepared", "cheapest", "dot_comma", "e164", "first_upper", "parts", "parts_gsm_pt",
           "prepare", "price_list", "read_rows", "render"]

# the character tables of GSM 03.38, as pasted from the standard; a shift character costs two septets
GSM_DOUBLE = frozenset(GSM_EXTENSION_TABLE.values()) - BASIC_CHARS
GSM = BASIC_CHARS | GSM_DOUBLE
GSM_PT_DOUBLE = frozenset(GSM_PT_SHIFT_TABLE.values()) - BASIC_CHARS
GSM_PT = BASIC_CHARS | GSM_PT_DOUBLE


def read_rows(path: str | Path, nrows: int | None = None) -> pd.DataFrame:
    """The contact table as text (its first ``nrows`` rows when given), empty cells as empty strings."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, nrows=nrows)


def e164(text: str, region: str = "ES") -> tuple[str, int] | None:
    """(digits of the E.164 number, calling code), or None when phonenumbers does not take it as valid."""
    text = text.strip().removesuffix(".0")  # numbers that went through a float column
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)[1:], number.country_code


def dot_comma(amount: str) -> str:
    """``1234567.5`` -> ``1.234.567,5`` (text that is not a plain number is left as it is)."""
    whole, dot, decimals = amount.partition(".")
    negative = whole.startswith("-")
    digits = whole[1:] if negative else whole
    if not digits.isdigit() or (dot and not decimals.isdigit()):
        return amount
    grouped = f"{int(digits):,}".replace(",", ".")
    return ("-" if negative else "") + grouped + ("," + decimals if dot else "")


def first_upper(name: str) -> str:
    """Upper-case the first letter, leave the rest as typed."""
    stripped = name.lstrip()
    return name[: len(name) - len(stripped)] + stripped[:1].upper() + stripped[1:]


def render(name: str, amount: str, unsub_link: str) -> str:
    """The benchmark campaign's text (``messy_data.TEMPLATE``) with str methods."""
    return f"Hola {first_upper(name)}, tu saldo es {dot_comma(amount)} EUR. Baja: {unsub_link}"


def cheapest(text: str) -> str:
    """gsm when every character is in the GSM set, else gsm-pt when in the Portuguese one, else utf-16."""
    chars = set(text)
    return "gsm" if chars <= GSM else "gsm-pt" if chars <= GSM_PT else "utf-16"


def parts(text: str, encoding: str) -> int:
    """SMS parts of ``text`` in ``encoding`` (160/153 septets, or 70/67 UTF-16 units)."""
    if encoding == "utf-16":
        units = len(text.encode("utf-16-le")) // 2
        return 1 if units <= 70 else math.ceil(units / 67)
    double = GSM_DOUBLE if encoding == "gsm" else GSM_PT_DOUBLE
    septets = len(text) + sum(1 for c in text if c in double)
    return 1 if septets <= 160 else math.ceil(septets / 153)


def parts_gsm_pt(text: str) -> int:
    """SMS parts of ``text`` sent as gsm-pt (a character outside it is sent as ``?``, one septet)."""
    return parts(text, "gsm-pt")


def price_list(channel: str = "sms") -> dict[str, float]:
    """Calling code -> unit price, from the price list (the CSV sendframe ships, read with pandas)."""
    with resources.as_file(resources.files("sendframe") / "data" / "prices.csv") as path:
        prices = pd.read_csv(path, dtype={"prefix": str})
    prices = prices[prices["channel"] == channel]
    return dict(zip(prices["prefix"], prices["unit_price"].astype(float), strict=True))


@dataclass
class Prepared:
    """What the analyst's loop produces: one entry per row it would send."""

    positions: list[int] = field(default_factory=list)
    recipients: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    parts: list[int] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    invalid: int = 0
    repeated: int = 0
    too_long: int = 0


def prepare(rows: pd.DataFrame, *, unsub_link: str, max_parts: int = 2, region: str = "ES") -> Prepared:
    """The loop: per row a valid E.164 number not seen before, the text, its parts (at most ``max_parts``), the cost."""
    prices = price_list()
    seen: set[str] = set()
    out = Prepared()
    for position, (phone, name, amount) in enumerate(zip(rows["phone"], rows["name"], rows["amount"], strict=True)):
        number = e164(phone, region)
        if number is None:
            out.invalid += 1
            continue
        recipient, code = number
        if recipient in seen:
            out.repeated += 1
            continue
        seen.add(recipient)
        text = render(name, amount, unsub_link)
        parts = parts_gsm_pt(text)
        if parts > max_parts:
            out.too_long += 1
            continue
        out.positions.append(position)
        out.recipients.append(recipient)
        out.texts.append(text)
        out.parts.append(parts)
        out.costs.append(prices.get(str(code), 0.0) * parts)
    return out
