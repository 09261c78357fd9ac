"""The recipient rule: what a valid phone number or email address is, in one place.

The sandbox rejects a recipient (code 102) exactly when the toolkit's preflight flags it, because
both call these functions. A valid phone recipient (docs/api-notes.md, "Recipients") is written in
API form: digits only, 8 to 15 of them, country calling code first, and the digits after the calling
code have a length ``phonenumbers`` lists as possible for that country (a full number, not a
local-only one; no trunk prefix such as the ``0`` of ``4407700900123``).

    >>> is_valid_phone("447700900123"), is_valid_phone("+447700900123")
    (True, False)
    >>> normalise_phone("+44 (0)7700 900123")
    '447700900123'
    >>> calling_code("34600123456"), region_of("34600123456")
    ('34', 'ES')
    >>> recipient_key(" Ana@Example.COM", "email"), recipient_key("+34 600 12 34 56", "phone")
    ('ana@example.com', '34600123456')
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import pandas as pd
import phonenumbers
from phonenumbers import PhoneNumber, ValidationResult
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, UNKNOWN_REGION

from sendframe.errors import InputError

__all__ = [
    "EMAIL_PATTERN",
    "MAX_EMAIL_LENGTH",
    "MAX_PHONE_DIGITS",
    "MIN_PHONE_DIGITS",
    "RECIPIENT_KINDS",
    "calling_code",
    "is_valid_email",
    "is_valid_phone",
    "normalise_phone",
    "recipient_key",
    "region_of",
]

MIN_PHONE_DIGITS = 8
MAX_PHONE_DIGITS = 15
MAX_EMAIL_LENGTH = 254

RECIPIENT_KINDS = ("phone", "email", "any")

# calling codes as text ("1", "34", "351"); they are prefix-free, so at most one matches a number
_CALLING_CODES: frozenset[str] = frozenset(str(code) for code in COUNTRY_CODE_TO_REGION_CODE)
EMAIL_PATTERN = r"[^@\s]+@[^@\s.][^@\s]*\.[^@\s]*[^@\s.]"  # a valid email, matched whole
_EMAIL = re.compile(EMAIL_PATTERN)
_SEPARATORS = re.compile(r"[\s\-().\u00a0/]")
_FLOAT_TEXT = re.compile(r"\+?\d+\.0+")  # "34600123456.0": a number that went through a float column


def _split_calling_code(number: str) -> tuple[str, str] | None:
    for size in (1, 2, 3):
        code = number[:size]
        if code in _CALLING_CODES:
            return code, number[size:]
    return None


@lru_cache(maxsize=4096)
def _possible_length(code: str, national: str) -> bool:
    # whether a national significant number of this length is a full possible number for the code;
    # phonenumbers' answer depends only on the code and the length, so this is cached by both
    # (callers pass a run of 9s of the right length)
    numobj = PhoneNumber(country_code=int(code), national_number=int(national))
    return phonenumbers.is_possible_number_with_reason(numobj) == ValidationResult.IS_POSSIBLE


def is_valid_phone(number: object) -> bool:
    """Whether ``number`` is a valid phone recipient in API form (see the module docstring).

    Anything that is not a ``str`` is not valid. About a microsecond per number.

        >>> is_valid_phone("34600123456"), is_valid_phone("3460012345678901"), is_valid_phone("34 600 123 456")
        (True, False, False)
    """
    if type(number) is not str:
        return False
    size = len(number)
    if size < MIN_PHONE_DIGITS or size > MAX_PHONE_DIGITS or not (number.isascii() and number.isdigit()):
        return False
    split = _split_calling_code(number)
    if split is None:
        return False
    code, national = split
    # a leading 0 would be read as a trunk prefix or an Italian leading zero; both keep the length
    return _possible_length(code, "9" * len(national))


def is_valid_email(address: object) -> bool:
    """Whether ``address`` is a valid email recipient: ``local@domain.tld``, no spaces, one ``@``,
    a dot inside the domain, at most 254 characters.

        >>> is_valid_email("ana@example.com"), is_valid_email("ana@localhost"), is_valid_email("a b@x.es")
        (True, False, False)
    """
    return type(address) is str and len(address) <= MAX_EMAIL_LENGTH and _EMAIL.fullmatch(address) is not None


def calling_code(number: str) -> str:
    """The country calling code a number in API form starts with, or ``""`` when none does.

        >>> calling_code("447700900123"), calling_code("16502530000"), calling_code("0123")
        ('44', '1', '')
    """
    if type(number) is not str or not number.isdigit():
        return ""
    split = _split_calling_code(number)
    return split[0] if split else ""


@lru_cache(maxsize=65536)
def _region_of_valid(number: str) -> str | None:
    numobj = phonenumbers.parse("+" + number)
    region = phonenumbers.region_code_for_number(numobj)
    if region is None:  # possible but not allocated (e.g. Ofcom's drama range): the code's main country
        region = phonenumbers.region_code_for_country_code(numobj.country_code or 0)
    return None if region in (None, UNKNOWN_REGION) else region


def region_of(number: str) -> str | None:
    """The ISO 3166 country of a number in API form, or ``None`` (invalid number, non-geographic code).

    Shared calling codes (``1``, ``7``, ``44``, ...) are resolved by the number's leading digits;
    a number that is possible but in no allocated range gets the code's main country.

        >>> region_of("14165550123"), region_of("447700900123"), region_of("123")
        ('CA', 'GB', None)
    """
    if not is_valid_phone(number):
        return None
    code, _ = _split_calling_code(number)  # type: ignore[misc]
    regions = COUNTRY_CODE_TO_REGION_CODE[int(code)]
    if len(regions) == 1:
        return None if regions[0] == "001" else regions[0]
    return _region_of_valid(number)


def _text_of(raw: object) -> str | None:
    # the raw cell as text, repairing numbers that went through a float column
    if raw is None or raw is pd.NA:
        return None
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw) or not raw.is_integer() or raw <= 0:
            return None
        return str(int(raw))
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    if _FLOAT_TEXT.fullmatch(text):
        text = text.split(".", 1)[0]
    return text


@lru_cache(maxsize=65536)
def _normalise_text(text: str, default_region: str) -> str | None:
    if "e" in text.lower():  # "3.46001e+10": the digits are lost, nothing to repair
        return None
    digits = _SEPARATORS.sub("", text)
    international = False
    if digits.startswith("+"):
        digits, international = digits[1:], True
    elif digits.startswith("00"):
        digits, international = digits[2:], True
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    if international:
        return digits if is_valid_phone(digits) else _via_phonenumbers("+" + digits, None)
    home_code = str(phonenumbers.country_code_for_region(default_region)) if default_region else ""
    if home_code != "0" and home_code and digits.startswith(home_code) and is_valid_phone(digits):
        return digits
    national = _via_phonenumbers(digits, default_region) if home_code not in ("", "0") else None
    if national is not None:
        return national
    return digits if is_valid_phone(digits) else None


def _via_phonenumbers(text: str, region: str | None) -> str | None:
    try:
        numobj = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    candidate = f"{numobj.country_code}{phonenumbers.national_significant_number(numobj)}"
    return candidate if is_valid_phone(candidate) else None


def normalise_phone(raw: object, default_region: str | None = "ES") -> str | None:
    """Turn a phone number as people write it into API form, or ``None`` when it cannot be repaired.

    Repairs: a leading ``+`` or ``00``; spaces, dashes, dots, slashes and parentheses; a trunk
    ``(0)``; numbers that went through a float column (``34600123456.0``); national numbers, which
    get ``default_region``'s calling code. Scientific notation (``"3.46001e+10"``) has lost digits
    and is not repairable. The answer always passes :func:`is_valid_phone`.

        >>> normalise_phone("0044 7700-900123"), normalise_phone("600 12 34 56"), normalise_phone(34600123456.0)
        ('447700900123', '34600123456', '34600123456')
        >>> normalise_phone("07700 900123", default_region="GB"), normalise_phone("3.46001e+10")
        ('447700900123', None)
    """
    text = _text_of(raw)
    if not text:
        return None
    return _normalise_text(text, (default_region or "").upper())


def email_key(address: object) -> str | None:
    """The form under which two email addresses are the same recipient, or ``None`` when it is no valid address.

    Surrounding whitespace is dropped and the address case-folded (``str.casefold``, docs/api-notes.md,
    "Recipients"); an address that is not valid once stripped has no key.

        >>> email_key("  Ana@Example.COM "), email_key("a b@x.es")
        ('ana@example.com', None)
        >>> email_key("STRASSE@x.de") == email_key("straße@x.de")  # casefold, not lower
        True
    """
    if type(address) is not str:
        return None
    stripped = address.strip()
    return stripped.casefold() if is_valid_email(stripped) else None


def check_kind(kind: object) -> str:
    """``kind`` when it names a recipient kind, else an error saying which ones there are.

        >>> check_kind("email")
        'email'
    """
    if kind not in RECIPIENT_KINDS:
        raise InputError(f"kind must be one of {', '.join(map(repr, RECIPIENT_KINDS))}; got {kind!r}.")
    return str(kind)


def recipient_key(value: object, kind: str, *, default_region: str | None = "ES") -> str | None:
    """The form under which two recipients are the same, or ``None`` when ``value`` is no valid recipient.

    - ``"phone"``: the number in API form, as :func:`normalise_phone` gives it for ``default_region``.
      Pass ``default_region=None`` for values already in API form (a ledger, an answer's ``to``): a
      digit run is then read as international, so ``"672123456"`` stays Norfolk Island instead of
      becoming the Spanish mobile ``34672123456``.
    - ``"email"``: :func:`email_key`, stripped and case-folded.
    - ``"any"``: each value by what it is: a valid email address (once stripped) as an email, anything
      else as a phone number. The two never overlap (no phone number has an ``@``), so this is a
      rule, not a guess; it is for recipients of mixed channels (a send history, the sandbox's store).

    :func:`sendframe.api.recipient_columns.recipient_keys` gives the same answers for a whole column.

        >>> recipient_key("0034 600-12-34-56", "phone"), recipient_key("600123456", "phone")
        ('34600123456', '34600123456')
        >>> recipient_key("672123456", "phone"), recipient_key("672123456", "phone", default_region=None)
        ('34672123456', '672123456')
        >>> recipient_key(" Ana@Example.com", "any"), recipient_key("+44 7700 900123", "any"), recipient_key("x", "any")
        ('ana@example.com', '447700900123', None)
    """
    kind = check_kind(kind)
    if kind != "phone":
        key = email_key(value)
        if kind == "email" or key is not None:
            return key
    return normalise_phone(value, default_region)
