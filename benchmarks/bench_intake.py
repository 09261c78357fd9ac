"""Benchmark: contact intake (read_contacts + preflight + estimate) of a messy 1,000,000-row CSV.

    python benchmarks/bench_intake.py            # 1,000,000 rows
    python benchmarks/bench_intake.py --quick    # 50,000 rows (smoke run)
    python benchmarks/bench_intake.py --csv contacts.csv   # your own file (columns phone, email, name, amount)

What it measures, each phase timed in this one run on the same file:

1. the floor: ``pandas.read_csv(path, dtype=str)``, what reading the file costs at all;
2. ``sendframe.read_contacts(path)``: read, normalise and validate every phone and email, flag duplicates,
   each phone's line type (``phone_type``, :mod:`sendframe.api.number_types`);
3. ``sendframe.preflight`` + ``sendframe.estimate`` of an SMS using ``{name|capitalize}``,
   ``{amount|formatDotComma}`` and ``{UNSUB_URL}``, parts=2, encoding="auto" (today's signatures);
4. the analyst's loop: what one writes without sendframe: ``pandas.read_csv`` and then, per row,
   ``phonenumbers.parse`` / ``is_valid_number`` / ``number_type`` (landlines left out, as intake's ``phone_type``
   and preflight's ``landline`` rule do) / ``format_number``, a regular expression for the email, a
   set of seen recipients, the text built with ``str`` methods, a set test for GSM characters and the
   parts and cost worked out. It is timed on ``--loop-rows`` rows and extrapolated linearly (the
   output says so), since it takes about a minute per million rows.

The file is the benchmarks' shared messy table (``messy_data.py``): phones as typed (``+``, ``00``, spaces,
dashes, dots, ``(0)``, national numbers, numbers that went through a float column, scientific notation,
junk), people appearing again (often typed differently), names from realistic pools (hundreds of
thousands of distinct names per million rows, some with characters GSM lacks), ids and amounts unique per
row, a city and an email. The number-type rule is also timed apart: read_contacts, preflight and estimate
again with ``phone_type`` left missing (``types_of_numbers`` replaced by a stub in this process only), run in
turn with the real ones so both see the same load; its cost is printed as +X% of intake without it
(target <= +20%, issue 21). Targets (issue 12): read_contacts <= 2x the floor, intake <= 4x the floor, intake >= 10x
faster than the loop. Each sendframe and pandas phase is run ``--repeat`` times (3) and its best time kept,
as the machine is shared; the loop runs once. preflight and estimate run as a pair, each pair from cold:
preflight measures the texts and estimate reuses that measurement (``sendframe.campaign.preview``), as it
does when an analyst calls them one after the other on the same table. Peak memory is the process's high-water mark
(``getrusage``) after each phase, so it includes what earlier phases held.
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import phonenumbers

import sendframe
import sendframe.campaign.contacts as contacts_module
from messy_data import TEMPLATE, write_messy_csv
from sendframe.api.number_types import NOT_SMS_TYPES, NUMBER_TYPES
from sendframe.campaign.preflight import preflight
from sendframe.campaign.prepared import estimate
from sendframe.campaign.preview import forget
from sendframe.errors import InputError
from sendframe.pricing import load_prices
from sendframe.text.encodings import BASIC_CHARS, GSM_EXTENSION_TABLE

# ---- the analyst's loop ---------------------------------------------------------------------------

NOT_TEXTABLE = frozenset(getattr(phonenumbers.PhoneNumberType, name.upper()) for name in NOT_SMS_TYPES)
GSM = frozenset(BASIC_CHARS) | frozenset(GSM_EXTENSION_TABLE.values())
EMAIL = re.compile(r"[^@\s]+@[^@\s.][^@\s]*\.[^@\s]*[^@\s.]")


def analyst_loop(path: Path, rows: int) -> dict[str, float]:
    """What one writes without sendframe: read with pandas, then a loop over the rows."""
    frame = pd.read_csv(path, dtype=str, nrows=rows, keep_default_na=False)
    prices = load_prices()
    seen: set[str] = set()
    total = messages = 0.0
    for phone, email, name, amount in zip(frame["phone"], frame["email"], frame["name"], frame["amount"], strict=True):
        try:
            number = phonenumbers.parse(phone, "ES")
            valid = phonenumbers.is_valid_number(number) and phonenumbers.number_type(number) not in NOT_TEXTABLE
            recipient = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)[1:]
        except phonenumbers.NumberParseException:
            valid, recipient = False, ""
        email_ok = EMAIL.fullmatch(email.strip()) is not None
        if not valid or recipient in seen:
            continue
        seen.add(recipient)
        whole, _, cents = amount.partition(".")
        text = (f"Hola {name.capitalize()}, tu saldo es {int(whole):,}".replace(",", ".") + f",{cents or '00'} EUR. "
                f"Baja: https://sndf.io/u/XXXXXXXX")
        gsm = all(c in GSM for c in text)
        length = len(text) + sum(c in "^{}\\[~]|€" for c in text) if gsm else len(text)
        parts = (1 if length <= 160 else -(-length // 153)) if gsm else (1 if length <= 70 else -(-length // 67))
        if parts > 2:
            continue
        total += prices.message_cost(recipient, "sms", parts=parts) + 0 * email_ok
        messages += parts
    return {"cost": total, "messages": messages}


# ---- the timed phases -----------------------------------------------------------------------------

def peak_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _no_types(numbers: np.ndarray) -> pd.Categorical:
    # phone_type all missing: what intake costs without the number-type rule (preflight then finds no landline)
    return pd.Categorical.from_codes(np.full(len(numbers), -1), categories=NUMBER_TYPES)


def _type_rule_cost(path: Path, encoding: str, repeat: int) -> dict[str, float]:
    """read_contacts, and read_contacts + preflight + estimate, with and without the number-type rule, the two
    runs in turn (so both meet the same load); the best of ``repeat`` of each, in wall-clock seconds and in the
    process's CPU seconds (what a loaded machine disturbs least; it counts Arrow's reader threads too)."""
    best: dict[str, float] = {}

    def run(label: str, read: Callable[[], pd.DataFrame]) -> None:
        forget()
        start, start_cpu = time.perf_counter(), time.process_time()
        contacts = read()
        middle, middle_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            preflight(sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding=encoding), contacts)
            estimate(sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="auto"), contacts)
        end, end_cpu = time.perf_counter(), time.process_time()
        for key, seconds in ((f"read {label}", middle - start), (f"intake {label}", end - start),
                             (f"read {label} cpu", middle_cpu - start_cpu),
                             (f"intake {label} cpu", end_cpu - start_cpu)):
            best[key] = min(best.get(key, float("inf")), seconds)

    for _ in range(repeat):
        with mock.patch.object(contacts_module, "types_of_numbers", _no_types):
            run("without", lambda: sendframe.read_contacts(path))
        run("with", lambda: sendframe.read_contacts(path))
    for what in ("read", "intake"):
        with_, without = best[f"{what} with"], best[f"{what} without"]
        cpu_with, cpu_without = best[f"{what} with cpu"], best[f"{what} without cpu"]
        name = "read_contacts" if what == "read" else "intake (read_contacts + preflight + estimate)"
        print(f"  {name:<46} {without:6.2f} s without the type rule, {with_:6.2f} s with: "
              f"{with_ / without - 1:+6.1%}; CPU {cpu_without:.2f} s / {cpu_with:.2f} s: "
              f"{cpu_with / cpu_without - 1:+6.1%} (best of {repeat} each, in turn)", flush=True)
    return best


def _preflight_encoding(contacts: pd.DataFrame) -> str:
    # today's preflight may not know encoding="auto" yet: then it is timed with what would be sent (gsm)
    try:
        preflight(sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="auto"), contacts.head(20))
    except InputError:
        return "gsm"
    return "auto"


def _timed(label: str, action, results: dict[str, float], repeat: int = 1):
    # the best of ``repeat`` runs: on a shared machine the others measure the neighbours
    best, best_cpu, value = float("inf"), float("inf"), None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        value = action()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    results[label], results[f"{label} cpu"] = best, best_cpu
    runs = f"best of {repeat}" if repeat > 1 else "one run"
    print(f"  {label:<38} {best:8.2f} s ({runs})   peak memory so far {peak_mb():7,.0f} MB", flush=True)
    return value


def _checks(contacts: pd.DataFrame, encoding: str, results: dict[str, float], repeat: int) -> tuple[Any, Any]:
    """preflight then estimate, as an analyst runs them: the first measures the texts, the second reuses that
    measurement. Each run starts cold (``forget``), and the run with the best total is kept."""
    best: tuple[float, float] = (float("inf"), float("inf"))
    best_cpu: tuple[float, float] = (float("inf"), float("inf"))
    problems = est = None
    for _ in range(repeat):
        forget()
        start, start_cpu = time.perf_counter(), time.process_time()
        problems = preflight(sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding=encoding), contacts)
        middle, middle_cpu = time.perf_counter(), time.process_time()
        est = estimate(sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="auto"), contacts)
        run = (middle - start, time.perf_counter() - middle)
        best = min(best, run, key=sum)
        best_cpu = min(best_cpu, (middle_cpu - start_cpu, time.process_time() - middle_cpu), key=sum)
    runs = f"best of {repeat}, each from cold" if repeat > 1 else "one run"
    for label, seconds, cpu in zip((f"sendframe.preflight (encoding={encoding})", "sendframe.estimate (encoding=auto)"),
                                   best, best_cpu, strict=True):
        results[label], results[f"{label} cpu"] = seconds, cpu
        print(f"  {label:<38} {seconds:8.2f} s ({runs})   peak memory so far {peak_mb():7,.0f} MB", flush=True)
    return problems, est


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--loop-rows", type=int, default=100_000, help="rows the analyst's loop is timed on")
    parser.add_argument("--quick", action="store_true", help="50,000 rows, loop on all of them")
    parser.add_argument("--csv", type=Path, help="use this file instead of writing one")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each sendframe/pandas phase; the best is kept")
    args = parser.parse_args(argv)
    rows = 50_000 if args.quick else args.rows
    loop_rows = rows if args.quick else min(args.loop_rows, rows)
    with tempfile.TemporaryDirectory() as folder:
        path = args.csv or write_messy_csv(Path(folder) / "contacts.csv", rows)
        rows = sum(1 for _ in path.open("rb")) - 1 if args.csv else rows
        size_mb = path.stat().st_size / 1e6
        print(f"file: {path.name}, {rows:,} rows, {size_mb:,.1f} MB; template {TEMPLATE!r}")
        print("measures: pandas.read_csv(dtype=str) of the file (the floor); sendframe.read_contacts(path) (read, "
              "normalise and validate phones and emails, flag duplicates); sendframe.preflight + sendframe.estimate "
              "of an SMS (parts=2, encoding auto); the analyst's per-row loop with phonenumbers (read_csv included)")
        warm = sendframe.read_contacts(pd.DataFrame({"phone": ["600123456"], "name": ["a"], "amount": ["1"]}))
        encoding = _preflight_encoding(warm)
        if encoding != "auto":
            print("note: today's preflight refuses encoding='auto'; it is timed with encoding='gsm'")
        estimate(sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="auto"), warm)  # price table, parsed template
        times: dict[str, float] = {}
        repeat = max(args.repeat, 1)
        _timed("pandas.read_csv(dtype=str)", lambda: pd.read_csv(path, dtype=str), times, repeat)
        contacts = _timed("sendframe.read_contacts", lambda: sendframe.read_contacts(path), times, repeat)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problems, est = _checks(contacts, encoding, times, repeat)
        print("the number-type rule (phone_type):")
        typed = _type_rule_cost(path, encoding, repeat)
        _timed(f"analyst's loop ({loop_rows:,} rows)", lambda: analyst_loop(path, loop_rows), times)
    phones, emails = int(contacts["phone_valid"].sum()), int(contacts["email_valid"].sum())
    print(f"contacts: {phones:,} valid phones, {emails:,} valid emails, {int(contacts['duplicate'].sum()):,} "
          f"duplicates; preflight: {len(problems):,} problems; estimate: {est.attrs['totals']['messages']:,} messages")
    for clock in ("", " cpu"):  # wall-clock seconds, then CPU seconds (what a loaded machine disturbs least)
        floor = times[f"pandas.read_csv(dtype=str){clock}"]
        read = times[f"sendframe.read_contacts{clock}"]
        intake = read + sum(v for k, v in times.items() if k.startswith(("sendframe.preflight", "sendframe.estimate"))
                            and k.endswith(" cpu") == bool(clock))
        loop = times[f"analyst's loop ({loop_rows:,} rows){clock}"] * rows / loop_rows
        print("in CPU seconds of the process (Arrow's reader threads counted):" if clock else "in wall-clock seconds:")
        print(f"  read_contacts / read_csv:  {read / floor:5.2f}x (target <= 2x)")
        print(f"  intake / read_csv:         {intake / floor:5.2f}x (target <= 4x)  "
              f"intake = read_contacts + preflight + estimate = {intake:.2f} s")
        scaled = "" if loop_rows == rows else f", extrapolated from {loop_rows:,} rows"
        print(f"  analyst's loop / intake:   {loop / intake:5.1f}x (target >= 10x)  loop = {loop:.1f} s{scaled}")
    print(f"type rule / intake without: {typed['intake with'] / typed['intake without'] - 1:+6.1%} (target <= +20%)  "
          f"read_contacts alone: {typed['read with'] / typed['read without'] - 1:+.1%}; in CPU seconds: "
          f"{typed['intake with cpu'] / typed['intake without cpu'] - 1:+.1%} and "
          f"{typed['read with cpu'] / typed['read without cpu'] - 1:+.1%}")
    print(f"peak memory of the process: {peak_mb():,.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
