"""Contact tables shaped like the ones analysts have: the shared data of the benchmarks.

    from messy_data import messy_contacts, write_messy_csv, describe
    frame = messy_contacts(100_000)            # a DataFrame of text columns, as read_csv(dtype=str) gives it
    write_messy_csv(path, 1_000_000)           # the same table as a CSV file

Columns: ``customer_id`` (unique), ``name`` (first name and one or two surnames, cased as people type
them: tens of thousands of distinct values per million rows, some with characters GSM lacks), ``phone``
(as typed, see below), ``email``, ``city`` (a few dozen, Zipf-like), ``amount`` (unique per row, two
decimals, as a database exports it).

Phones, the way people's tables hold them: ``+34 612 345 678``, ``0034612345678``, ``612-345-678``,
``612.34.56.78``, national numbers without a prefix, ``(+34) ...``, ``+44 (0)7700 900123``, numbers that
went through a float column (``34612345678.0``, ``3.46123e+10`` with digits lost), some junk (``n/a``,
``call me``, ``#N/A``, empty, too short), and people appearing again (``REPEATS`` of the rows), often
typed another way. Mostly Spanish numbers, some Portuguese, British, French, German, Italian, US.

Deterministic for a given ``seed``; about 1.5 s per million rows, vectorised with numpy apart from
a few list comprehensions. ``bench_intake``'s own generator (written alongside) draws the same kind
of table; this module is the one the other benchmarks import.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

__all__ = ["COLUMNS", "REPEATS", "TEMPLATE", "describe", "messy_contacts", "write_messy_csv"]

COLUMNS = ("customer_id", "name", "phone", "email", "city", "amount")
REPEATS = 0.12  # share of rows that are a person already in the table
JUNK_SHARE = 0.02
# the campaign the benchmarks send: a variable per column kind, a filter, and the unsubscribe link
TEMPLATE = "Hola {name|capitalize}, tu saldo es {amount|formatDotComma} EUR. Baja: {UNSUB_URL}"

def _words(text: str) -> list[str]:
    return text.split()


FIRST = _words("ana maría josé carmen javier lucía pablo marta iñigo begoña joão inês sofia zoë łukasz đorđe ștefan "
         "søren ömer hugo paula elena diego laura sergio nuria raúl ainhoa óscar irene álvaro noelia jordi "
         "montserrat xavier aitor rocío gonçalo françois chloé jürgen giulia matteo olivia jack manuel antonio "
         "francisco david juan jesús daniel carlos miguel rafael pedro ángel alejandro fernando luis alberto "
         "isabel dolores pilar teresa rosa cristina mercedes sara andrea silvia beatriz patricia verónica "
         "julia alba claudia adrián mario rubén iván víctor enrique emilio ramón tomás gabriel mateo leo "
         "martina valeria daniela emma noa vega carla lola aurora mia")
LAST = _words("garcía fernández gonzález rodríguez lópez martínez sánchez pérez gómez martín jiménez ruiz hernández "
        "díaz moreno muñoz álvarez romero alonso gutiérrez navarro torres domínguez vázquez ramos gil ramírez "
        "serrano blanco molina morales suárez ortega delgado castro ortiz rubio marín sanz núñez iglesias "
        "medina garrido cortés castillo santos lozano guerrero cano prieto méndez cruz calvo gallego vidal "
        "león márquez herrera peña flores cabrera campos vega fuentes carrasco diez caballero reyes nieto "
        "aguilar pascual santana herrero lorenzo montero hidalgo giménez ibáñez ferrer durán santiago "
        "benítez mora vicente vargas arias carmona crespo román pastor soto sáez velasco moya soler parra "
        "esteban bravo gallardo rojas silva ferreira pereira oliveira costa rodrigues sousa gonçalves smith "
        "jones müller schmidt rossi russo dubois lefèvre kowalski wiśniewski petrović nielsen yılmaz popescu")
CITIES = _words("Madrid Barcelona Valencia Sevilla Zaragoza Málaga Murcia Palma Las_Palmas Bilbao Alicante Córdoba "
          "Valladolid Vigo Gijón A_Coruña Vitoria-Gasteiz Granada Elche Oviedo Badalona Cartagena Terrassa "
          "Jerez Sabadell Móstoles Santa_Cruz Pamplona Almería Alcalá Fuenlabrada San_Sebastián Leganés "
          "Santander Burgos Castellón Albacete Getafe Salamanca Logroño Lisboa Porto London Paris Berlin Roma "
          "Kraków Cádiz León".replace("_", "~"))
DOMAINS = ("gmail.com", "hotmail.com", "yahoo.es", "outlook.com", "telefonica.net", "icloud.com", "hotmail.es",
           "live.com", "gmail.es", "empresa.example")
JUNK = ("", "n/a", "-", "call me", "123", "+34 600", "desconocido", "600 123", "0", "+", "no tiene", "#N/A",
        "pendiente", "34", "600000000000000")
# country: (weight, calling code, whether people write (0) after the code)
COUNTRIES = {"ES": (80, "34", False), "PT": (6, "351", False), "GB": (5, "44", True), "FR": (4, "33", True),
             "DE": (2, "49", True), "IT": (2, "39", False), "US": (1, "1", False)}


def _national_numbers(country: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Mobile national significant numbers of ``country`` (as text), mostly valid ones."""
    if country == "ES":  # 6xx xxx xxx, and a tenth 71x-74x
        return np.where(rng.random(n) < 0.9, 600_000_000 + rng.integers(0, 100_000_000, n),
                        710_000_000 + rng.integers(0, 40_000_000, n)).astype(str)
    if country == "PT":
        return (910_000_000 + rng.choice([0, 10, 20, 50], n) * 1_000_000 + rng.integers(0, 10_000_000, n)).astype(str)
    if country == "GB":
        return (7_400_000_000 + rng.integers(0, 600_000_000, n)).astype(str)
    if country == "FR":
        return (600_000_000 + rng.integers(0, 200_000_000, n)).astype(str)
    if country == "DE":
        return (15_100_000_000 + rng.choice([0, 10, 60], n) * 100_000_000 + rng.integers(0, 100_000_000, n)).astype(str)
    if country == "IT":
        return (3_200_000_000 + rng.integers(0, 700_000_000, n)).astype(str)
    area = rng.integers(201, 990, n)  # US: NPA-NXX-XXXX, NPA and NXX not starting with 0 or 1
    return (area * 10_000_000 + rng.integers(200, 1000, n) * 10_000 + rng.integers(0, 10_000, n)).astype(str)


def _grouped(number: str, sep: str, pairs: bool) -> str:
    if pairs:  # 612 34 56 78
        return sep.join([number[:3], *(number[i:i + 2] for i in range(3, len(number), 2))])
    if len(number) == 10:  # 7700 900 123
        return sep.join([number[:4], number[4:7], number[7:]])
    return sep.join(number[i:i + 3] for i in range(0, len(number), 3))  # 612 345 678


def _written(country: str, code: str, trunk: bool, numbers: np.ndarray, forms: np.ndarray,
             seps: np.ndarray, pairs: np.ndarray) -> list[str]:
    """Each number as a person typed it; ``forms`` in [0, 1) picks the way."""
    out = []
    for number, form, sep, pair in zip(numbers.tolist(), forms.tolist(), seps.tolist(), pairs.tolist(), strict=True):
        if country == "ES":
            if form < 0.22:
                out.append(f"+34 {_grouped(number, sep, pair)}")
            elif form < 0.42:
                out.append(_grouped(number, sep, pair))  # national, as Spaniards write it
            elif form < 0.50:
                out.append(f"0034{sep}{number}")
            elif form < 0.62:
                out.append(f"34{number}")
            elif form < 0.72:
                out.append(number)
            elif form < 0.82:
                out.append(f"34{number}.0" if form < 0.79 else f"{number}.0")  # through a float column
            elif form < 0.835:
                out.append(f"{float('34' + number):.5e}")  # scientific notation: digits lost
            elif form < 0.89:
                out.append(f"(+34) {_grouped(number, sep, pair)}")
            elif form < 0.93:
                out.append(f"+34-{_grouped(number, '-', False)}")
            else:
                out.append(f"+34{number}")
        elif trunk and form < 0.35:
            out.append(f"+{code} (0){_grouped(number, sep, False)}")
        elif form < 0.7:
            out.append(f"+{code} {_grouped(number, sep, pair)}")
        elif form < 0.85:
            out.append(f"00{code} {number}")
        elif country == "US":
            out.append(f"+1 ({number[:3]}) {number[3:6]}-{number[6:]}")
        else:
            out.append(f"{code}{number}.0")
    return out


def _ranked(rng: np.random.Generator, size: int, rows: int) -> np.ndarray:
    """Indices into a list ordered from common to rare (the k-th item drawn in proportion to 1 / (k + 8))."""
    weights = 1.0 / (np.arange(size) + 8.0)
    return rng.choice(size, rows, p=weights / weights.sum())


def messy_contacts(rows: int, seed: int = 12) -> pd.DataFrame:
    """The benchmark contact table (module docstring), all columns text, on a RangeIndex.

        >>> frame = messy_contacts(1000)
        >>> list(frame.columns), frame["customer_id"].is_unique, frame["amount"].is_unique
        (['customer_id', 'name', 'phone', 'email', 'city', 'amount'], True, True)
    """
    rng = np.random.default_rng(seed)
    at = np.arange(rows)
    # who each row is: itself, or (REPEATS of the time) a person of an earlier row
    person = at.copy()
    again = (rng.random(rows) < REPEATS) & (at > 0)
    person[again] = (rng.random(int(again.sum())) * at[again]).astype(np.int64)
    for _ in range(64):  # an earlier row may itself repeat someone: follow to the first row of the person
        following = person[person]
        if np.array_equal(following, person):
            break
        person = following

    names = list(COUNTRIES)
    weights = np.array([COUNTRIES[c][0] for c in names], dtype=float)
    country_of = rng.choice(len(names), rows, p=weights / weights.sum())[person]
    forms = rng.random(rows)
    same_way = again & (rng.random(rows) < 0.5)  # half the repeats typed the same way as the first time
    forms[same_way] = forms[person[same_way]]
    seps = np.asarray([" ", " ", " ", "-", ".", ""], dtype=object)[rng.integers(0, 6, rows)]
    pairs = rng.random(rows) < 0.3
    phone = np.empty(rows, dtype=object)
    for index, country in enumerate(names):
        mine = np.flatnonzero(country_of == index)
        firsts = np.unique(person[mine])
        numbers = np.empty(rows, dtype=object)
        numbers[firsts] = _national_numbers(country, len(firsts), rng)
        _, code, trunk = COUNTRIES[country]
        phone[mine] = _written(country, code, trunk, numbers[person[mine]], forms[mine], seps[mine], pairs[mine])
    junk = rng.random(rows) < JUNK_SHARE
    phone[junk] = np.asarray(JUNK, dtype=object)[rng.integers(0, len(JUNK), int(junk.sum()))]

    first = np.asarray(FIRST, dtype=object)[_ranked(rng, len(FIRST), rows)][person]
    last1 = np.asarray(LAST, dtype=object)[_ranked(rng, len(LAST), rows)][person]
    last2 = np.asarray(LAST, dtype=object)[rng.integers(0, len(LAST), rows)][person]
    two = (rng.random(rows) < 0.55)[person]
    casing = rng.random(rows)
    name = [f"{f} {a} {b}" if t else f"{f} {a}" for f, a, b, t in zip(first.tolist(), last1.tolist(), last2.tolist(),
                                                                     two.tolist(), strict=True)]
    name = [n.title() if c < 0.45 else n.upper() if c < 0.55 else n for n, c in zip(name, casing.tolist(), strict=True)]
    user_number = rng.integers(1, 10_000, rows)[person]
    domain = np.asarray(DOMAINS, dtype=object)[_ranked(rng, len(DOMAINS), rows)][person]
    email = [f"{f}.{a}{u}@{d}".replace(" ", "")
             for f, a, u, d in zip(first.tolist(), last1.tolist(), user_number.tolist(), domain.tolist(), strict=True)]
    bad = rng.random(rows)
    email = [e.upper() if b < 0.03 else e.replace("@", " @") if b < 0.035 else e.split("@")[0] if b < 0.045 else e
             for e, b in zip(email, bad.tolist(), strict=True)]
    city = np.asarray([c.replace("~", " ") for c in CITIES], dtype=object)[_ranked(rng, len(CITIES), rows)]
    cents = (at * 7_919 + 1_234) % 10_000_000  # 7,919 is prime to 10^7: unique per row up to ten million rows
    amount = [f"{c // 100}.{c % 100:02d}" for c in cents.tolist()]
    return pd.DataFrame({
        "customer_id": pd.array([f"C{i:08d}" for i in range(rows)], dtype="str"),
        "name": pd.array(name, dtype="str"),
        "phone": pd.array(phone, dtype="str"),
        "email": pd.array(email, dtype="str"),
        "city": pd.array(city, dtype="str"),
        "amount": pd.array(amount, dtype="str"),
    })


def write_messy_csv(path: str | Path, rows: int, seed: int = 12) -> Path:
    """Write :func:`messy_contacts` as a UTF-8 CSV without quotes (no value holds a comma); return the path."""
    path = Path(path)
    table = pa.Table.from_pandas(messy_contacts(rows, seed), preserve_index=False)
    pacsv.write_csv(table, path, pacsv.WriteOptions(quoting_style="none"))
    return path


def describe(frame: pd.DataFrame) -> str:
    """One line saying what the table holds: distinct values per column and how the phones are written."""
    phone = frame["phone"].astype("str")
    kinds = {
        "+": phone.str.startswith("+").mean(), "00": phone.str.startswith("00").mean(),
        "float": phone.str.endswith(".0").mean(), "e+": phone.str.contains("e+", regex=False).mean(),
        "(0)": phone.str.contains("(0)", regex=False).mean(),
    }
    distinct = ", ".join(f"{c} {frame[c].nunique():,}" for c in frame.columns)
    written = " ".join(f"{k} {v:.0%}" for k, v in kinds.items())
    return f"{len(frame):,} rows; distinct values: {distinct}; phones written with {written}"
