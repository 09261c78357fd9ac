"""``sendframe send | preview | estimate``: a campaign from a contacts CSV, from the shell.

    sendframe preview data/contacts.csv --message "Hola {name|capitalize}"
    sendframe estimate data/contacts.csv --message "Hola {name}" --encoding auto --out estimate.csv
    sendframe send data/contacts.csv --channel sms --message "Hola {name}" --from Shop --campaign spring
    sendframe send data/contacts.csv --channel voice --message "Hola {name}" --language es_ES --gender F
    sendframe send data/contacts.csv --channel voiceAudio --audio-url https://example.com/a.mp3
    sendframe send data/contacts.csv --channel whatsapp --template-id 1002 --from 34911111111 --body-fields name
    sendframe send data/contacts.csv --channel mailing --message "<p>Hola {name}</p>" --subject Hi --from-email a@b.es

The three build one :class:`~sendframe.Message` from the same flags, so what ``preview`` shows and
``estimate`` prices is what ``send`` sends; ``preview`` and ``estimate`` also accept send's own flags
(a send's command line runs with the subcommand's name changed). Rows the policy leaves out
(invalid or repeated recipients, suppressed, preflight errors) are skipped by all three with their
own outcome unless ``--keep REASON``.

Credentials for ``send`` come from the environment: SENDFRAME_BASE_URL, SENDFRAME_USERNAME,
SENDFRAME_API_PASSWORD (never from a flag, so they stay out of shell history).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from sendframe.api.validation import sender_label_problem
from sendframe.campaign.contacts import read_contacts
from sendframe.campaign.message import (
    Message,
    landing_sms,
    mailing,
    sms,
    voice,
    voice_audio,
    whatsapp,
)
from sendframe.campaign.policy import KEEP_REASONS, skipped_summary
from sendframe.channels import CHANNELS
from sendframe.channels import channel as channel_info
from sendframe.errors import InputError, RowsSkippedWarning

__all__ = ["add_arguments", "default_ledger_path", "message_from_args", "message_ledger_path", "run"]

_NO_MESSAGE = {"voiceAudio": "it plays --audio-url", "whatsapp": "it sends the approved template --template-id"}

_LEDGER_HELP = (
    "SQLite journal that makes the send resumable: run the same command again with the same ledger "
    "and rows already answered are skipped. Default: ./<campaign or contacts file name>-<hash>.ledger.sqlite "
    "in the current folder, where <hash> is 8 hex digits of the channel, sender and message, so the "
    "same command resumes and a changed message starts a new ledger."
)
_KEEP_HELP = (
    "send rows the policy leaves out anyway (repeatable): invalid (missing or invalid recipient), suppressed "
    "(on --suppression), preflight (another preflight error of the row), duplicate (the recipient repeats an "
    "earlier row). By default they are skipped, a line says how many, and --out keeps them with outcome "
    "skipped_<reason>"
)
_FIELDS_HELP = "comma-separated column names filling the template's {} variables in order (whatsapp)"

# the message and the policy: the same for send, preview and estimate (one Message from one command line)
_MESSAGE_FLAGS: tuple[tuple[tuple[str, ...], dict[str, Any], str], ...] = (
    (("--from",), {"dest": "sender", "metavar": "SENDER"},
     "sender: an SMS sender label (15 digits or 11 letters/digits), required for sms and landingsms; "
     "the registered WhatsApp sender, required for whatsapp"),
    (("--campaign",), {"metavar": "NAME"}, "campaign name (groups the statistics)"),
    (("--encoding",), {"choices": ("gsm", "gsm-pt", "utf-16", "auto")},
     "SMS encoding (default: the service's, gsm); auto: the cheapest that carries each row's text, sent as estimated"),
    (("--parts",), {"type": int, "metavar": "N"},
     "most SMS parts per message (service default 1); rows needing more are skipped"),
    (("--trans",), {"type": int, "choices": (0, 1), "default": 0},
     "1: replace accented characters per the spec's table"),
    (("--certified",), {"action": "store_true"}, "certified sending (priced as such)"),
    (("--notification-url",), {"metavar": "URL"},
     "delivery notification address (escape codes such as %%i, %%s; sms and landingsms)"),
    (("--subject",), {}, "email subject (mailing, required)"),
    (("--from-email",), {}, "validated sender address (mailing, required)"),
    (("--reply-to",), {}, "validated reply address (mailing; default: --from-email)"),
    (("--template-body",), {"metavar": "HTML"}, "landing page HTML (landingsms; default: a page with the message)"),
    (("--template-id",), {"type": int, "metavar": "ID"},
     "approved template id (whatsapp, required); for landingsms a stored landing page instead of --template-body"),
    (("--language",), {"metavar": "CODE"},
     "text-to-speech language (voice, required): en_GB, en_US, es_ES, es_US, pt_PT, pt_BR, cmn_CN, arb, de_DE, "
     "fr_FR, it_IT, hi_IN (cmn_CN, arb and hi_IN only with --gender F)"),
    (("--gender",), {"choices": ("F", "M")}, "voice gender (voice, required): F or M"),
    (("--audio-url",), {"metavar": "URL"}, "address of the audio file to play (voiceAudio, required; no --message)"),
    (("--header-fields",), {"metavar": "COLS"}, _FIELDS_HELP.format("header")),
    (("--body-fields",), {"metavar": "COLS"}, _FIELDS_HELP.format("body")),
    (("--cta-fields",), {"metavar": "COLS"}, _FIELDS_HELP.format("button (call to action)")),
    (("--suppression",), {"metavar": "FILE"}, "suppression list (CSV of phones or emails): those rows are skipped"),
    (("--local-time",), {"metavar": "HH:MM"},
     "send at this time on each recipient's clock (zone from a timezone column, else from the number)"),
    (("--quiet-hours",), {"nargs": 2, "metavar": ("FROM", "TO")}, "deliver only between these local times"),
    (("--frequency-cap",), {"nargs": 2, "type": float, "metavar": ("N", "DAYS")},
     "skip recipients already sent N messages in the last DAYS days (per --history)"),
    (("--history",), {"metavar": "FOLDER"}, "folder of earlier campaigns' ledgers, for --frequency-cap"),
    (("--keep",), {"action": "append", "choices": KEEP_REASONS}, _KEEP_HELP),
    (("--keep-duplicates",), {"action": "store_true"}, "the same as --keep duplicate"),
)
# how the send runs: accepted by preview and estimate too (a send's command line runs renamed), used by send
_SEND_FLAGS: tuple[tuple[tuple[str, ...], dict[str, Any], str], ...] = (
    (("--batch-size",), {"type": int, "default": 500, "metavar": "N"},
     "recipients per request (default 500, at most 1000)"),
    (("--ledger",), {"metavar": "FILE"}, _LEDGER_HELP),
    (("--resend-unknown",), {"action": "store_true"},
     "also send rows whose earlier outcome is unknown (they may have been sent already: check them first)"),
    (("--stop-after-unknown",), {"type": int, "default": 3, "metavar": "N"},
     "start no new batch after N batches in a row end with an unknown outcome (default 3; 0 never stops); "
     "running the same command again continues"),
    (("--max-cost",), {"type": float, "metavar": "AMOUNT"},
     "cap on the estimated spend of the whole campaign (the price table's currency, counting what the ledger sent): "
     "no batch starts that would go above it; the same command with a higher cap continues"),
    (("--callbacks",), {"metavar": "LOG"},
     "the callback log of this campaign's notifications: rows whose outcome was unknown and whose notification "
     "came back are marked accepted before sending (never sent twice)"),
    (("--dry-run",), {"action": "store_true"}, "build and validate every request, send nothing"),
    (("--no-progress",), {"action": "store_true"}, "no progress bar"),
)


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``send``, ``preview`` or ``estimate`` to ``parser`` (see the module docstring).

    The three take the same message flags (one message from one command line); ``preview`` and
    ``estimate`` also accept send's own flags, so a send's command line runs with the name changed.

        >>> parser = argparse.ArgumentParser()
        >>> add_arguments("preview", parser)
        >>> parser.parse_args(["c.csv", "--message", "Hi", "--from", "Shop", "--campaign", "x"]).sender
        'Shop'
    """
    parser.add_argument("contacts", metavar="CONTACTS",
                        help="contact table: CSV (any delimiter), Excel, ODS, Parquet or JSON lines; read as text")
    parser.add_argument("--channel", default="sms", choices=CHANNELS,
                        help="sms (default), landingsms, mailing, voice, voiceAudio, whatsapp")
    parser.add_argument("--message", metavar="TEXT",
                        help="message template: {variable}, {variable|filter}, {OTP_CODE}, {UNSUB_URL}, {LAND_URL}; "
                             "for mailing the HTML body. Required, except for voiceAudio and whatsapp "
                             "(which take none)")
    parser.add_argument("--phone-column", default=None,
                        help="column of phone numbers (default: phone, or a usual name such as Mobile, Móvil, "
                             "Telefone)")
    parser.add_argument("--email-column", default=None, help="column of email addresses (default: email, E-mail, ...)")
    parser.add_argument("--region", default="ES", help="country assumed for national numbers (ISO code, default: ES)")
    parser.add_argument("--out", metavar="FILE.csv", help="also write the result, one row per contact, as CSV")
    for flags, options, help_text in _MESSAGE_FLAGS:
        parser.add_argument(*flags, **options, help=help_text)
    if name in ("preview", "estimate"):
        parser.add_argument("--link-base", metavar="URL",
                            help="base address of generated links (default: $SENDFRAME_BASE_URL)")
        parser.add_argument("--rows", type=int, default=20, metavar="N", help="rows to print (default 20; 0 = all)")
        parser.add_argument("--prices", metavar="PRICES.csv",
                            help="price table (default: the one shipped with sendframe)")
    if name == "send":
        for flags, options, help_text in _SEND_FLAGS:
            parser.add_argument(*flags, **options, help=help_text)
        return
    group = parser.add_argument_group(
        "accepted for the same command line as send",
        f"Every flag of send is accepted, so a send's command line runs with send replaced by {name}; these are "
        "ignored here.")
    for flags, options, help_text in _SEND_FLAGS:
        group.add_argument(*flags, **options, help=f"ignored here. In send: {help_text}")


def default_ledger_path(contacts: str | Path, channel: str, message: str, sender: str | None, campaign: str | None,
                        folder: str | Path = ".") -> Path:
    """The ledger ``send`` uses when ``--ledger`` is not given (see ``sendframe send --help``).

        >>> default_ledger_path("data/contacts.csv", "sms", "Hi", "Shop", None).name
        'contacts-42653ac0.ledger.sqlite'
    """
    stem = campaign or Path(contacts).stem
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.") or "campaign"
    digest = hashlib.sha256("\x1f".join((channel, sender or "", message)).encode()).hexdigest()[:8]
    return Path(folder) / f"{safe}-{digest}.ledger.sqlite"


def _contacts(args: argparse.Namespace) -> pd.DataFrame:
    columns = {k: v for k, v in (("phone_column", args.phone_column), ("email_column", args.email_column)) if v}
    return read_contacts(args.contacts, default_region=args.region, **columns)


def _show(frame: pd.DataFrame, rows: int) -> str:
    shown = frame if rows == 0 else frame.head(rows)
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.max_colwidth", 70):
        text = shown.to_string()
    if rows and len(frame) > rows:
        text += f"\n... {len(frame) - rows} more rows (--rows 0 shows all, --out writes them)"
    return text


def _write(frame: pd.DataFrame, out: str | None) -> None:
    if out:
        frame.to_csv(out, index=False)
        print(f"wrote {len(frame)} rows to {out}")


def _given(args: argparse.Namespace, flag: str) -> Any:
    return getattr(args, "sender" if flag == "--from" else flag[2:].replace("-", "_"), None)


def _require(args: argparse.Namespace, channel: str, *flags: str) -> None:
    missing = [flag for flag in flags if _given(args, flag) in (None, "")]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise InputError(f"{' and '.join(missing)} {verb} required for --channel {channel}.")


def _refuse(args: argparse.Namespace, channel: str, flag: str, why: str) -> None:
    if _given(args, flag) is not None:
        raise InputError(f"{flag} does not apply to --channel {channel}: {why}.")


def _keep(args: argparse.Namespace) -> list[str]:
    keep = list(getattr(args, "keep", None) or [])
    if getattr(args, "keep_duplicates", False):
        keep.append("duplicate")
    return keep


def message_from_args(args: argparse.Namespace) -> Message:
    """The :class:`~sendframe.Message` a command line describes (the same one for send, preview and estimate)."""
    channel = args.channel
    common: dict[str, Any] = {"to": args.email_column if channel == "mailing" else args.phone_column,
                              "campaign": getattr(args, "campaign", None),
                              "link_base": getattr(args, "link_base", None), "suppression": args.suppression,
                              "local_time": args.local_time, "quiet_hours": args.quiet_hours,
                              "history": args.history,
                              "frequency_cap": (int(args.frequency_cap[0]), args.frequency_cap[1])
                              if args.frequency_cap else None}
    if channel_info(channel).sends_sms:
        common.update(encoding=args.encoding, parts=args.parts, trans=args.trans or None,
                      certified=getattr(args, "certified", False) or None)
        if getattr(args, "notification_url", None):
            common["notification_url"] = args.notification_url
    else:
        for flag, value in (("--encoding", args.encoding), ("--parts", args.parts)):
            if value is not None:
                raise InputError(f"{flag} applies to sms and landingsms, not --channel {channel}.")
        if getattr(args, "notification_url", None) and channel != "mailing":  # email sends no notifications
            raise InputError(f"--notification-url applies to sms and landingsms, not {channel}.")
    if channel in _NO_MESSAGE:
        _refuse(args, channel, "--message", _NO_MESSAGE[channel])
    else:
        _require(args, channel, "--message")
    if channel == "sms":
        _require(args, channel, "--from")
        return sms(args.message, args.sender, **common)
    if channel == "landingsms":
        _require(args, channel, "--from")
        return landing_sms(args.message, args.sender, template_body=args.template_body,
                           template_id=args.template_id, **common)
    if channel == "mailing":
        _require(args, channel, "--subject", "--from-email")
        return mailing(args.subject, args.message, from_email=args.from_email, reply_to=args.reply_to, **common)
    if channel in ("voice", "voiceAudio"):
        _refuse(args, channel, "--from", "calls come from the account's caller numbers")
        if channel == "voice":
            _require(args, channel, "--language", "--gender")
            return voice(args.message, language=args.language, gender=args.gender, **common)
        _require(args, channel, "--audio-url")
        return voice_audio(args.audio_url, **common)
    _require(args, channel, "--template-id", "--from")  # whatsapp
    return whatsapp(args.template_id, args.sender, header_fields=args.header_fields or (),
                    body_fields=args.body_fields or (), cta_fields=args.cta_fields or (), **common)


def _preview_message(args: argparse.Namespace, command: str) -> Message:
    """The message of a preview or estimate: send's whole command line, with --from optional."""
    if args.message is None and args.channel in _NO_MESSAGE:
        raise InputError(f"{args.channel} has no message text to {command}: {_NO_MESSAGE[args.channel]}.")
    if args.message is None:
        raise InputError(f"--message TEXT is required: the template to {command}.")
    if args.channel in ("sms", "landingsms", "whatsapp") and args.sender is None:
        args = argparse.Namespace(**{**vars(args), "sender": "Preview"})
    elif args.sender is not None and channel_info(args.channel).sends_sms:
        problem = sender_label_problem(args.sender)
        if problem:
            print(f"--from: the sender label {problem}; send would refuse it.", file=sys.stderr)
            args = argparse.Namespace(**{**vars(args), "sender": "Preview"})
    if args.channel == "mailing":
        args = argparse.Namespace(**{**vars(args), "subject": args.subject or "(subject)",
                                     "from_email": args.from_email or "preview@example.com"})
    if args.channel == "voice":
        args = argparse.Namespace(**{**vars(args), "language": args.language or "en_GB", "gender": args.gender or "F"})
    return message_from_args(args)


def _say_skipped(plan: pd.DataFrame, verb: str) -> None:
    summary = skipped_summary(plan, verb)
    if summary:
        print(summary.replace("keep=", "--keep ").replace("['", "").replace("']", "").replace("', '", " --keep "))


def _preview(args: argparse.Namespace) -> int:
    msg = _preview_message(args, "preview")
    contacts = _contacts(args)
    table = msg.preview(contacts, keep=_keep(args))
    print(_show(table, args.rows))
    _write(table, args.out)
    _say_skipped(table, "sent")
    return 0


def _estimate(args: argparse.Namespace) -> int:
    msg = _preview_message(args, "estimate")
    contacts = _contacts(args)
    est = msg.estimate(contacts, prices=args.prices, keep=_keep(args))
    column = msg.recipient_column(contacts)
    table = pd.concat([contacts[[column]], est], axis=1)
    table.loc[table["action"] != "send", "cost"] = float("nan")
    print(_show(table.drop(columns=["text"]), args.rows))
    _say_skipped(est, "priced: send leaves them out")
    totals = est.attrs["totals"]
    encodings = ", ".join(f"{k}: {v}" for k, v in totals["encodings"].items()) or "none"
    print(
        f"\n{totals['rows']} rows, {totals['billable']} billable, {totals['messages']} messages charged, "
        f"total {totals['cost']:.4f} {totals['currency']}\nencodings: {encodings}; "
        f"rows losing characters: {totals['rows_losing_characters']}; too many parts: {totals['too_many_parts']}; "
        f"missing text: {totals['missing_text']}"
    )
    _write(table, args.out)
    return 0


def message_ledger_path(contacts: str | Path, msg: Message, folder: str | Path = ".") -> Path:
    """The default ledger of sending ``msg`` to the table ``contacts`` (a file or a table's name): the same
    file for ``sendframe send`` and the Composer, so neither sends twice what the other sent.

        >>> message_ledger_path("data/contacts.csv", sms("Hi", "Shop")).name
        'contacts-42653ac0.ledger.sqlite'
    """
    identity = "\x1f".join(str(v) for k, v in sorted(msg.fields.items()) if k not in ("campaignName", "from"))
    sender = msg.fields.get("from") or msg.fields.get("fromEmail")
    return default_ledger_path(contacts, msg.channel, identity, sender, msg.fields.get("campaignName"), folder)


def _send(args: argparse.Namespace) -> int:
    if args.batch_size < 1 or args.batch_size > 1000:
        raise InputError(f"--batch-size must be between 1 and 1000 (got {args.batch_size}).")
    msg = message_from_args(args)
    contacts = _contacts(args)
    ledger = args.ledger or message_ledger_path(args.contacts, msg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RowsSkippedWarning)  # said below, in the command's own words
        result = msg.send(contacts, ledger=str(ledger), batch_size=args.batch_size, progress=not args.no_progress,
                          dry_run=args.dry_run, resend_unknown=args.resend_unknown,
                          stop_after_unknown=args.stop_after_unknown or None,
                          keep=_keep(args), max_cost=args.max_cost, callbacks=args.callbacks)
    _say_skipped(result.rename(columns={"outcome": "action"}), "sent")
    _write(result, args.out)
    outcome = result["outcome"].astype("str")
    counts = outcome.value_counts().to_dict()
    print(f"{len(result)} rows: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" (ledger: {ledger})")
    unknown = int((outcome == "unknown").sum())
    not_sent = int((outcome == "not_sent").sum())
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
    commands = {"send": _send, "preview": _preview, "estimate": _estimate}
    return commands[name](args)
