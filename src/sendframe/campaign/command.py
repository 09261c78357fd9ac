"""``sendframe send | preview | estimate``: a campaign from a contacts CSV, from the shell.

    sendframe preview data/contacts.csv --message "Hola {name|capitalize}"
    sendframe estimate data/contacts.csv --message "Hola {name}" --encoding auto --out estimate.csv
    sendframe send data/contacts.csv --channel sms --message "Hola {name}" --from Shop --campaign spring

Credentials for ``send`` come from the environment: SENDFRAME_BASE_URL, SENDFRAME_USERNAME,
SENDFRAME_API_PASSWORD (never from a flag, so they stay out of shell history).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from sendframe.api.errors import InputError

__all__ = ["add_arguments", "default_ledger_path", "run"]

SEND_CHANNELS = ("sms", "landingsms", "mailing")
_ALL_CHANNELS = ("sms", "mailing", "voice", "voiceAudio", "landingsms", "whatsapp")

_LEDGER_HELP = (
    "SQLite journal that makes the send resumable: run the same command again with the same ledger "
    "and rows already answered are skipped. Default: ./<campaign or contacts file name>-<hash>.ledger.sqlite "
    "in the current folder, where <hash> is 8 hex digits of the channel, sender and message, so the "
    "same command resumes and a changed message starts a new ledger."
)


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``send``, ``preview`` or ``estimate`` to ``parser`` (see the module docstring)."""
    parser.add_argument("contacts", metavar="CONTACTS.csv", help="contact table (CSV, UTF-8; read as text so leading zeros survive)")
    parser.add_argument("--channel", default="sms", choices=_ALL_CHANNELS if name != "send" else None,
                        help="sms (default), landingsms, mailing" + ("" if name == "send" else ", voice, voiceAudio, whatsapp"))
    parser.add_argument("--message", required=True, metavar="TEXT",
                        help="message template: {variable}, {variable|filter}, {OTP_CODE}, {UNSUB_URL}, {LAND_URL}; for mailing the HTML body")
    parser.add_argument("--phone-column", default="phone", help="column of phone numbers (default: phone)")
    parser.add_argument("--email-column", default="email", help="column of email addresses (default: email)")
    parser.add_argument("--region", default="ES", help="country assumed for national numbers (ISO code, default: ES)")
    parser.add_argument("--trans", type=int, choices=(0, 1), default=0, help="1: replace accented characters per the spec's table")
    parser.add_argument("--out", metavar="FILE.csv", help="also write the result, one row per contact, as CSV")
    if name in ("preview", "estimate"):
        parser.add_argument("--link-base", metavar="URL", help="base address of generated links (default: $SENDFRAME_BASE_URL)")
        parser.add_argument("--rows", type=int, default=20, metavar="N", help="rows to print (default 20; 0 = all)")
    if name == "estimate":
        parser.add_argument("--encoding", default=None, choices=("gsm", "gsm-pt", "utf-16", "auto"),
                            help="encoding to request (default gsm; auto = cheapest per row)")
        parser.add_argument("--parts", type=int, default=None, help="most parts allowed; rows needing more are not billable (105)")
        parser.add_argument("--certified", action="store_true", help="price as certified sending")
        parser.add_argument("--prices", metavar="PRICES.csv", help="price table (default: data/prices.csv)")
    if name == "send":
        parser.add_argument("--from", dest="sender", metavar="SENDER",
                            help="sender label (15 digits or 11 letters/digits); required for sms and landingsms")
        parser.add_argument("--campaign", metavar="NAME", help="campaign name (groups the statistics)")
        parser.add_argument("--batch-size", type=int, default=500, metavar="N", help="recipients per request (default 500, at most 1000)")
        parser.add_argument("--ledger", metavar="FILE", help=_LEDGER_HELP)
        parser.add_argument("--notification-url", metavar="URL", help="delivery notification address (escape codes such as %%i, %%s)")
        parser.add_argument("--encoding", default=None, choices=("gsm", "gsm-pt", "utf-16"), help="encoding to request (default: the service's, gsm)")
        parser.add_argument("--parts", type=int, default=None, help="most SMS parts allowed per message (service default 1)")
        parser.add_argument("--subject", help="email subject (mailing)")
        parser.add_argument("--from-email", help="validated sender address (mailing)")
        parser.add_argument("--reply-to", help="validated reply address (mailing; default: --from-email)")
        parser.add_argument("--template-body", metavar="HTML", help="landing page HTML (landingsms; default: a page with the message)")
        parser.add_argument("--dry-run", action="store_true", help="build and validate every request, send nothing")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")


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
    from sendframe.campaign.contacts import read_contacts

    return read_contacts(args.contacts, phone_column=args.phone_column, email_column=args.email_column, default_region=args.region)


def _recipient_column(args: argparse.Namespace) -> str:
    return args.email_column if args.channel == "mailing" else args.phone_column


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


def _preview(args: argparse.Namespace) -> int:
    from sendframe.campaign.preview import render

    contacts = _contacts(args)
    column = _recipient_column(args)
    text = render(contacts, args.message, channel=args.channel, link_base=args.link_base, trans=args.trans)
    table = pd.DataFrame({column: contacts[column] if column in contacts else pd.NA, "text": text})
    print(_show(table, args.rows))
    _write(table, args.out)
    missing = int(text.isna().sum())
    if missing:
        print(f"{missing} row(s) have no text: a variable is missing (sendframe preflight names it).")
    return 0


def _estimate(args: argparse.Namespace) -> int:
    from sendframe.campaign.estimate import estimate

    contacts = _contacts(args)
    column = _recipient_column(args)
    est = estimate(contacts, args.message, channel=args.channel, encoding=args.encoding, parts=args.parts,
                   certified=args.certified, prices=args.prices, trans=args.trans, link_base=args.link_base)
    table = pd.concat([contacts[[column]], est], axis=1)
    print(_show(table.drop(columns=["text"]), args.rows))
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


def _send(args: argparse.Namespace) -> int:
    channel = args.channel
    if channel not in SEND_CHANNELS:
        raise InputError(f"sendframe send supports --channel {', '.join(SEND_CHANNELS)}; for {channel} use the Python API "
                         f"(sendframe.send_{'voice_audio' if channel == 'voiceAudio' else channel.lower()}).")
    if args.batch_size < 1 or args.batch_size > 1000:
        raise InputError(f"--batch-size must be between 1 and 1000 (got {args.batch_size}).")
    from sendframe.campaign import send as sending

    contacts = _contacts(args)
    column = _recipient_column(args)
    to_send = contacts.copy()
    if channel != "mailing":  # a number read_contacts could not repair is sent as written: the service rejects it (102)
        raw = f"{column}_raw"
        fallback = to_send[raw] if raw in to_send else pd.Series("", index=to_send.index)
        to_send[column] = to_send[column].fillna(fallback).fillna("")
    else:
        to_send[column] = to_send[column].fillna("")
    ledger = args.ledger or default_ledger_path(args.contacts, channel, args.message, args.sender or args.from_email, args.campaign)
    common: dict[str, Any] = {
        "ledger": str(ledger), "batch_size": args.batch_size, "progress": not args.no_progress,
        "dry_run": args.dry_run, "campaign": args.campaign,
    }
    if args.notification_url:
        common["notification_url"] = args.notification_url
    sms_fields = {k: v for k, v in (("encoding", args.encoding), ("parts", args.parts)) if v is not None}
    if args.trans:
        sms_fields["trans"] = args.trans
    if channel in ("sms", "landingsms"):
        if not args.sender:
            raise InputError(f"--from SENDER is required for {channel}.")
        if channel == "sms":
            result = sending.send_sms(to_send, args.message, args.sender, to_column=column, **sms_fields, **common)
        else:
            body = args.template_body or f"<p>{args.message}</p>"
            result = sending.send_landingsms(to_send, args.message, args.sender, to_column=column, template_body=body, **sms_fields, **common)
    else:
        if not args.subject or not args.from_email:
            raise InputError("--subject and --from-email are required for mailing.")
        common.pop("notification_url", None)  # email sends no notifications
        result = sending.send_mailing(to_send, args.subject, args.message, from_email=args.from_email,
                                      reply_to=args.reply_to or args.from_email, to_column=column, **common)
    table = pd.concat([contacts[[column]].rename(columns={column: "recipient"}), result], axis=1)
    _write(table, args.out)
    outcome = result["outcome"].astype("str")
    counts = outcome.value_counts().to_dict()
    print(f"{len(result)} rows: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" (ledger: {ledger})")
    unknown = int((outcome == "unknown").sum())
    if unknown:
        print(f"{unknown} row(s) have an unknown outcome: they may or may not have been sent. "
              f"Check them before re-sending (Ledger({str(ledger)!r}).unknown_rows()).", file=sys.stderr)
        return 1
    return 0


def run(name: str, args: argparse.Namespace) -> int:
    """Run ``send``, ``preview`` or ``estimate`` with parsed ``args``; returns the exit code.

    Exit codes: 0 done; 1 an error (printed by the dispatcher) or, for ``send``, rows with an
    unknown outcome.
    """
    commands = {"send": _send, "preview": _preview, "estimate": _estimate}
    return commands[name](args)
