"""``sendframe send | preview | estimate``: a campaign from a contacts CSV, from the shell.

    sendframe preview data/contacts.csv --message "Hola {name|capitalize}"
    sendframe estimate data/contacts.csv --message "Hola {name}" --encoding auto --out estimate.csv
    sendframe send data/contacts.csv --channel sms --message "Hola {name}" --sender Shop --campaign-name spring
    sendframe send data/contacts.csv --channel voice --message "Hola {name}" --language es_ES --gender F
    sendframe send data/contacts.csv --channel voiceAudio --audio-url https://example.com/a.mp3
    sendframe send data/contacts.csv --channel whatsapp --template-id 1002 --sender 34911111111 --body-fields name
    sendframe send data/contacts.csv --channel mailing --body "<p>Hola {name}</p>" --subject Hi --from-email a@b.es

The flags are the options of the channels' constructors and of ``Message.send``, spelled from
their names (``notification_url`` is ``--notification-url``) and made from the same table
(:func:`~sendframe.campaign.channel_options.channel_options`); :data:`NOT_FLAGS` lists the options
that are no flag, and why. The three build one :class:`~sendframe.Message` from the same flags, so
what ``preview`` shows and ``estimate`` prices is what ``send`` sends; ``preview`` and ``estimate``
also accept send's own flags (a send's command line runs with the subcommand's name changed). Rows
the policy leaves out (invalid or repeated recipients, suppressed, preflight errors) are skipped by
all three with their own outcome unless ``--keep REASON``.

Credentials for ``send`` come from the environment: SENDFRAME_BASE_URL, SENDFRAME_USERNAME,
SENDFRAME_API_PASSWORD (never from a flag, so they stay out of shell history).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from sendframe.api.models import GENDERS, LANGUAGES
from sendframe.api.validation import sender_label_problem
from sendframe.campaign.channel_options import (
    STORED_TEMPLATES,
    OptionSpec,
    channel_options,
    missing_options,
    option_names,
    preview_placeholders,
    text_option,
)
from sendframe.campaign.contacts import read_contacts
from sendframe.campaign.message import CONSTRUCTORS, Message
from sendframe.campaign.message_options import listed_names
from sendframe.campaign.policy import KEEP_REASONS, skipped_summary
from sendframe.channels import CHANNELS, channel
from sendframe.errors import InputError, RowsSkippedWarning, naming_full_disk
from sendframe.text.encodings import ENCODINGS

__all__ = ["NOT_FLAGS", "add_arguments", "flag", "message_from_args", "message_ledger_path",
           "options_from_args", "run"]

NOT_FLAGS: tuple[str, ...] = ("client", "cancel", "now", "out")
"""The options of the table that are no flag of the command, and why: ``client`` (credentials come from the
environment: SENDFRAME_BASE_URL, SENDFRAME_USERNAME, SENDFRAME_API_PASSWORD), ``cancel`` (Ctrl-C stops a command; the
ledger keeps what was answered), ``now`` (a command runs now), ``out`` (``--out`` writes the result, one row per
contact, as CSV)."""
# send's options that preview and estimate use (their other send flags are accepted and ignored)
_USED_WITHOUT_SENDING = {"preview": ("keep",), "estimate": ("keep", "prices")}
# how a flag parses its value: by the option's kind of value, then what some options need besides
_BY_VALUE: dict[str, dict[str, Any]] = {
    "bool": {"action": argparse.BooleanOptionalAction}, "int": {"type": int, "metavar": "N"},
    "float": {"type": float, "metavar": "X"}, "pair": {"nargs": 2},
    "list": {"type": lambda text: list(listed_names(text, "")), "metavar": "A,B"},
    "structure": {"type": json.loads, "metavar": "JSON"}, "text": {}, "object": {}}
_SHAPES: dict[str, dict[str, Any]] = {
    "keep": {"action": "append", "choices": KEEP_REASONS, "type": str, "metavar": None},
    "encoding": {"choices": (*ENCODINGS, "auto")}, "gender": {"choices": GENDERS}, "language": {"choices": LANGUAGES},
    "trans": {"choices": (0, 1)}, "frequency_cap": {"type": float, "metavar": ("N", "DAYS")},
    "quiet_hours": {"metavar": ("FROM", "TO")},
    "ledger": {"metavar": "FILE", "help": "SQLite journal that makes the send resumable: run the same command again "
               "with the same ledger and rows already answered are skipped. Default: ./<campaign or contacts file "
               "name>-<hash>.ledger.sqlite in the current folder, where <hash> is 8 hex digits of the channel, sender "
               "and message, so the same command resumes and a changed message starts a new ledger"},
    "stop_after_unknown": {"help": "start no new batch after N batches in a row end with an unknown outcome "
                                   "(default 3; 0 never stops); running the same command again continues"},
}


def flag(name: str) -> str:
    """The command-line flag of an option.

        >>> flag("notification_url")
        '--notification-url'
    """
    return "--" + name.replace("_", "-")


def _flag_options() -> dict[str, tuple[OptionSpec, tuple[str, ...]]]:
    """Every option of any channel that is a flag -> (its spec, the channels taking it); the message's flags first."""
    specs: dict[str, OptionSpec] = {}
    for option in (o for name in CHANNELS for o in channel_options(name) if o.name not in NOT_FLAGS):
        specs.setdefault(option.name, option)
    ordered = sorted(specs.values(), key=lambda option: option.role == "send")
    return {o.name: (o, tuple(c for c in CHANNELS if o.name in option_names(c))) for o in ordered}


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``send``, ``preview`` or ``estimate`` to ``parser`` (see the module docstring).

    The three take the same message flags (one message from one command line); ``preview`` and
    ``estimate`` also accept send's own flags, so a send's command line runs with the name changed.

        >>> parser = argparse.ArgumentParser()
        >>> add_arguments("preview", parser)
        >>> parser.parse_args(["c.csv", "--message", "Hi", "--sender", "Shop", "--campaign-name", "x"]).sender
        'Shop'
    """
    parser.add_argument("contacts", metavar="CONTACTS",
                        help="contact table: CSV (any delimiter), Excel, ODS, Parquet or JSON lines; read as text")
    parser.add_argument("--channel", default="sms", choices=CHANNELS, help="the channel to send on (default: sms)")
    parser.add_argument("--out", metavar="FILE.csv", help="also write the result, one row per contact, as CSV")
    if name in ("preview", "estimate"):
        parser.add_argument("--rows", type=int, default=20, metavar="N", help="rows to print (default 20; 0 = all)")
    ignored = parser.add_argument_group(
        "accepted for the same command line as send",
        f"Every flag of send is accepted, so a send's command line runs with send replaced by {name}; these are "
        "ignored here.") if name != "send" else parser
    for option, channels in _flag_options().values():
        used = option.role != "send" or name == "send" or option.name in _USED_WITHOUT_SENDING[name]
        shape = {**_BY_VALUE[option.value], **_SHAPES.get(option.name, {})}
        default = "" if option.default is None or option.value == "bool" else f" (default: {option.default})"
        where = "" if len(channels) == len(CHANNELS) else f" ({', '.join(channels)})"
        text = ("" if used else "ignored here. In send: ") + shape.pop("help", option.help + default) + where
        (parser if used else ignored).add_argument(flag(option.name), dest=option.name, default=None,
                                                   help=text.replace("%", "%%"), **shape)


def _show(frame: pd.DataFrame, rows: int) -> None:
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.max_colwidth", 70):
        print((frame if rows == 0 else frame.head(rows)).to_string())
    if rows and len(frame) > rows:
        print(f"... {len(frame) - rows} more rows (--rows 0 shows all, --out writes them)")


def _say_skipped(plan: pd.DataFrame, verb: str) -> None:
    summary = skipped_summary(plan, verb)
    if summary:
        print(summary.replace("keep=", "--keep ").replace("['", "").replace("']", "").replace("', '", " --keep "))


def _write(frame: pd.DataFrame, out: str | None) -> None:
    if out:
        with naming_full_disk(out, "the file was not written; free space and run the same command again (a send "
                              "sends nothing twice: its ledger holds every answer).", torn=True):
            frame.to_csv(out, index=False)
        print(f"wrote {len(frame)} rows to {out}")


def options_from_args(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the message's options, send's) a command line gives; flags not given are left out: the library's defaults hold.

        >>> parser = argparse.ArgumentParser()
        >>> add_arguments("send", parser)
        >>> options_from_args(parser.parse_args(["c.csv", "--message", "Hi", "--parts", "2", "--batch-size", "9"]))
        ({'message': 'Hi', 'parts': 2}, {'batch_size': 9})
    """
    given = [(o, getattr(args, o.name, None)) for o in channel_options(args.channel) if o.name not in NOT_FLAGS]
    return ({o.name: v for o, v in given if v is not None and o.role != "send"},
            {o.name: v for o, v in given if v is not None and o.role == "send"})


def message_from_args(args: argparse.Namespace, command: str = "send") -> Message:
    """The :class:`~sendframe.Message` a command line describes, the same for send, preview and estimate: a preview
    or estimate takes send's whole command line, with placeholders for what only send needs."""
    name, values = channel(args.channel).name, dict(vars(args))
    if command != "send":
        text = text_option(name)
        if text is None:
            raise InputError(f"{name} has no message text to {command}.")
        if values[text] is None:
            raise InputError(f"{flag(text)} TEXT is required: the template to {command}.")
        if args.sender is not None and channel(name).sends_sms and sender_label_problem(args.sender):
            print(f"--sender: the sender label {sender_label_problem(args.sender)}; send would refuse it.",
                  file=sys.stderr)
            values["sender"] = None
        values.update(preview_placeholders(name, values))
    for option, channels in _flag_options().values():
        if name not in channels and values.get(option.name) is not None:
            raise InputError(f"{flag(option.name)} does not apply to --channel {name}: it applies to "
                             f"{', '.join(channels)}.")
    stored = [flag(o.name) for o in channel_options(name) if o.name in STORED_TEMPLATES]
    missing = [flag(option) + (f" (or {' or '.join(stored)})" if stored and option == text_option(name) else "")
               for option in missing_options(name, values)]
    if missing:
        raise InputError(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required for --channel "
                         f"{name}.")
    return CONSTRUCTORS[name](**options_from_args(argparse.Namespace(**values))[0])


def _preview(args: argparse.Namespace, msg: Message, contacts: pd.DataFrame) -> int:
    table = msg.preview(contacts, keep=args.keep)
    _show(table, args.rows)
    _say_skipped(table, "sent")
    _write(table, args.out)
    return 0


def _estimate(args: argparse.Namespace, msg: Message, contacts: pd.DataFrame) -> int:
    est = msg.estimate(contacts, prices=args.prices, keep=args.keep)
    table = pd.concat([contacts[[msg.recipient_column(contacts)]], est], axis=1)
    table.loc[table["action"] != "send", "cost"] = float("nan")
    _show(table.drop(columns=["text"]), args.rows)
    _say_skipped(est, "priced: send leaves them out")
    totals = est.attrs["totals"]
    encodings = ", ".join(f"{k}: {v}" for k, v in totals["encodings"].items()) or "none"
    print(f"\n{totals['rows']} rows, {totals['billable']} billable, {totals['messages']} messages charged, "
          f"total {totals['cost']:.4f} {totals['currency']}\nencodings: {encodings}; "
          f"rows losing characters: {totals['rows_losing_characters']}; too many parts: {totals['too_many_parts']}; "
          f"missing text: {totals['missing_text']}")
    _write(table, args.out)
    return 0


def message_ledger_path(contacts: str | Path, msg: Message, folder: str | Path = ".") -> Path:
    """The default ledger of sending ``msg`` to the table ``contacts`` (a file or a table's name): the same
    file for ``sendframe send`` and the Composer, so neither sends twice what the other sent. It is named after the
    campaign name or the table, with 8 hex digits of the channel, sender and message: the same command resumes,
    a changed message starts a new ledger.

        >>> from sendframe.campaign.message import sms
        >>> message_ledger_path("data/contacts.csv", sms("Hi", "Shop")).name
        'contacts-42653ac0.ledger.sqlite'
    """
    identity = "\x1f".join(str(v) for k, v in sorted(msg.fields.items()) if k not in ("campaignName", "from"))
    sender = msg.fields.get("from") or msg.fields.get("fromEmail") or ""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", msg.fields.get("campaignName") or Path(contacts).stem).strip("-.")
    digest = hashlib.sha256("\x1f".join((msg.channel, sender, identity)).encode()).hexdigest()[:8]
    return Path(folder) / f"{stem or 'campaign'}-{digest}.ledger.sqlite"


def _send(args: argparse.Namespace, msg: Message, contacts: pd.DataFrame) -> int:
    options = options_from_args(args)[1]
    ledger = options["ledger"] = str(args.ledger or message_ledger_path(args.contacts, msg))
    if options.get("stop_after_unknown") == 0:
        options["stop_after_unknown"] = None  # never stops
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RowsSkippedWarning)  # said below, in the command's own words
        result = msg.send(contacts, **options)
    _say_skipped(result.rename(columns={"outcome": "action"}), "sent")
    _write(result, args.out)
    counts = result["outcome"].astype("str").value_counts().to_dict()
    print(f"{len(result)} rows: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" (ledger: {ledger})")
    unknown, not_sent = counts.get("unknown", 0), counts.get("not_sent", 0)
    if not_sent:
        print(f"{not_sent} row(s) were not sent (see error_code in --out): run the same command again to send them.",
              file=sys.stderr)
    if unknown:
        print(f"{unknown} row(s) have an unknown outcome: they may or may not have been sent. Check them "
              f"(Ledger({str(ledger)!r}).unknown_rows()) before running again with --resend-unknown.", file=sys.stderr)
    return 1 if unknown or not_sent else 0


def run(name: str, args: argparse.Namespace) -> int:
    """Run ``send``, ``preview`` or ``estimate`` with parsed ``args``; returns the exit code.

    Exit codes: 0 done; 1 an error (printed by the dispatcher) or, for ``send``, rows with an
    unknown outcome or not sent (running the same command again sends those).
    """
    msg = message_from_args(args, name)
    contacts = read_contacts(args.contacts, default_region=args.default_region or "ES",  # --to: phone_ or email_column
                             **({f"{msg.info.recipient}_column": args.to} if args.to else {}))
    return {"send": _send, "preview": _preview, "estimate": _estimate}[name](args, msg, contacts)
