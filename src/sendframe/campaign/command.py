"""``sendframe send | preview | estimate``: a campaign from a contacts CSV, from the shell.

    sendframe preview data/contacts.csv --message "Hola {name|capitalize}"
    sendframe estimate data/contacts.csv --message "Hola {name}" --encoding auto --out estimate.csv
    sendframe send data/contacts.csv --channel sms --message "Hola {name}" --from Shop --campaign spring
    sendframe send data/contacts.csv --channel voice --message "Hola {name}" --language es_ES --gender F
    sendframe send data/contacts.csv --channel voiceAudio --audio-url https://example.com/a.mp3
    sendframe send data/contacts.csv --channel whatsapp --template-id 1002 --from 34911111111 --body-fields name
    sendframe send data/contacts.csv --channel mailing --message "<p>Hola {name}</p>" --subject Hi --from-email a@b.es

``preview`` and ``estimate`` accept every flag of ``send`` (a send's command line runs with the
subcommand's name changed); they use ``--out`` and check ``--from``, and ignore the rest.
``send`` skips rows whose recipient repeats an earlier row unless ``--keep-duplicates``.

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

from sendframe.errors import InputError

__all__ = ["add_arguments", "default_ledger_path", "run"]

SEND_CHANNELS = ("sms", "mailing", "voice", "voiceAudio", "landingsms", "whatsapp")
_ALL_CHANNELS = SEND_CHANNELS
SKIPPED_DUPLICATE = "skipped_duplicate"  # the --out outcome of a row send skipped as a duplicate
_NO_MESSAGE = {"voiceAudio": "it plays --audio-url", "whatsapp": "it sends the approved template --template-id"}

_LEDGER_HELP = (
    "SQLite journal that makes the send resumable: run the same command again with the same ledger "
    "and rows already answered are skipped. Default: ./<campaign or contacts file name>-<hash>.ledger.sqlite "
    "in the current folder, where <hash> is 8 hex digits of the channel, sender and message, so the "
    "same command resumes and a changed message starts a new ledger."
)
_DUPLICATES_HELP = (
    "also send to rows whose recipient (the phone, or the email for mailing) repeats an earlier row. By default "
    "they are skipped and a line says how many; in --out they keep their place with outcome "
    f"{SKIPPED_DUPLICATE} and every other result column empty."
)
_FIELDS_HELP = "comma-separated column names filling the template's {} variables in order (whatsapp)"

# send's own flags: (flags, argparse options, help). preview and estimate accept them too, so the same
# command line works with send replaced by preview or estimate.
_SEND_FLAGS: tuple[tuple[tuple[str, ...], dict[str, Any], str], ...] = (
    (("--from",), {"dest": "sender", "metavar": "SENDER"},
     "sender: an SMS sender label (15 digits or 11 letters/digits), required for sms and landingsms; "
     "the registered WhatsApp sender, required for whatsapp"),
    (("--campaign",), {"metavar": "NAME"}, "campaign name (groups the statistics)"),
    (("--batch-size",), {"type": int, "default": 500, "metavar": "N"}, "recipients per request (default 500, at most 1000)"),
    (("--ledger",), {"metavar": "FILE"}, _LEDGER_HELP),
    (("--notification-url",), {"metavar": "URL"}, "delivery notification address (escape codes such as %%i, %%s; sms and landingsms)"),
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
    (("--keep-duplicates",), {"action": "store_true"}, _DUPLICATES_HELP),
    (("--resend-unknown",), {"action": "store_true"},
     "also send rows whose earlier outcome is unknown (they may have been sent already: check them first)"),
    (("--stop-after-unknown",), {"type": int, "default": 3, "metavar": "N"},
     "start no new batch after N batches in a row end with an unknown outcome (default 3; 0 never stops); "
     "running the same command again continues"),
    (("--dry-run",), {"action": "store_true"}, "build and validate every request, send nothing"),
    (("--no-progress",), {"action": "store_true"}, "no progress bar"),
)
# what preview and estimate make of send's flags (the rest are accepted and ignored)
_USED_BY_PREVIEW = {"--from": "checked as an SMS sender label for sms and landingsms (a problem is printed)"}


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``send``, ``preview`` or ``estimate`` to ``parser`` (see the module docstring).

    ``preview`` and ``estimate`` also accept every flag of ``send``, so a send's command line
    previews or estimates with the subcommand's name changed.

        >>> parser = argparse.ArgumentParser()
        >>> add_arguments("preview", parser)
        >>> parser.parse_args(["c.csv", "--message", "Hi", "--from", "Shop", "--campaign", "x"]).sender
        'Shop'
    """
    parser.add_argument("contacts", metavar="CONTACTS.csv", help="contact table (CSV, UTF-8; read as text so leading zeros survive)")
    parser.add_argument("--channel", default="sms", choices=_ALL_CHANNELS,
                        help="sms (default), landingsms, mailing, voice, voiceAudio, whatsapp")
    parser.add_argument("--message", metavar="TEXT",
                        help="message template: {variable}, {variable|filter}, {OTP_CODE}, {UNSUB_URL}, {LAND_URL}; "
                             "for mailing the HTML body. Required, except for voiceAudio and whatsapp (which take none)")
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
    else:
        what = "" if name == "send" else " (accepted for the same command line as send; ignored here)"
        parser.add_argument("--encoding", default=None, choices=("gsm", "gsm-pt", "utf-16"),
                            help="encoding to request (default: the service's, gsm)" + what)
        parser.add_argument("--parts", type=int, default=None, help="most SMS parts allowed per message (service default 1)" + what)
    if name == "send":
        for flags, options, help_text in _SEND_FLAGS:
            parser.add_argument(*flags, **options, help=help_text)
        return
    group = parser.add_argument_group(
        "accepted for the same command line as send",
        f"Every flag of send is accepted, so a send's command line runs with send replaced by {name}. "
        "--out writes this command's table; --from (and for estimate --keep-duplicates) as below; the others are ignored here.")
    used = dict(_USED_BY_PREVIEW)
    if name == "estimate":
        used["--keep-duplicates"] = "rows whose recipient repeats an earlier row are left out of the estimate, as send leaves them out; this counts them"
    for flags, options, help_text in _SEND_FLAGS:
        use = used.get(flags[0], "ignored here")
        group.add_argument(*flags, **options, help=f"{use}. In send: {help_text}")


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


def _template(args: argparse.Namespace, command: str) -> str:
    """The --message a preview or estimate renders; a clear error when there is none."""
    if args.message is None:
        if args.channel in _NO_MESSAGE:
            raise InputError(f"{args.channel} has no message text to {command}: {_NO_MESSAGE[args.channel]}.")
        raise InputError(f"--message TEXT is required: the template to {command}.")
    return str(args.message)


def _check_sender(args: argparse.Namespace) -> None:
    """Print what is wrong with --from as an SMS sender label (send would refuse it)."""
    from sendframe.api.validation import sender_label_problem

    if args.sender is not None and args.channel in ("sms", "landingsms"):
        problem = sender_label_problem(args.sender)
        if problem:
            print(f"--from: the sender label {problem}; send would refuse it.", file=sys.stderr)


def _preview(args: argparse.Namespace) -> int:
    from sendframe.campaign.preview import render

    message = _template(args, "preview")
    _check_sender(args)
    contacts = _contacts(args)
    column = _recipient_column(args)
    text = render(contacts, message, channel=args.channel, link_base=args.link_base, trans=args.trans)
    table = pd.DataFrame({column: contacts[column] if column in contacts else pd.NA, "text": text})
    print(_show(table, args.rows))
    _write(table, args.out)
    missing = int(text.isna().sum())
    if missing:
        print(f"{missing} row(s) have no text: a variable is missing (sendframe preflight names it).")
    return 0


def _skipped_duplicates(args: argparse.Namespace, contacts: pd.DataFrame, column: str) -> pd.Series:
    """Rows ``send`` leaves out (their recipient repeats an earlier row) unless --keep-duplicates; says how many."""
    from sendframe.campaign.contacts import duplicate_recipients

    if args.keep_duplicates or column not in contacts.columns:
        return pd.Series(False, index=contacts.index)
    skipped = duplicate_recipients(contacts[column], "email" if args.channel == "mailing" else "phone")
    if skipped.any():
        print(f"skipped {int(skipped.sum())} duplicate row(s): their {column} repeats an earlier row "
              f"(--keep-duplicates {'counts' if getattr(args, 'command', 'send') == 'estimate' else 'sends'} them)")
    return skipped


def _estimate(args: argparse.Namespace) -> int:
    from sendframe.campaign.estimate import estimate

    message = _template(args, "estimate")
    _check_sender(args)
    contacts = _contacts(args)
    column = _recipient_column(args)
    sendable = contacts.loc[~_skipped_duplicates(args, contacts, column).to_numpy()]  # what send would send
    est = estimate(sendable, message, channel=args.channel, encoding=args.encoding, parts=args.parts,
                   certified=args.certified, prices=args.prices, trans=args.trans, link_base=args.link_base)
    table = pd.concat([contacts[[column]], est.reindex(contacts.index)], axis=1)
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


def _given(args: argparse.Namespace, flag: str) -> Any:
    return getattr(args, "sender" if flag == "--from" else flag[2:].replace("-", "_"))


def _require(args: argparse.Namespace, channel: str, *flags: str) -> None:
    missing = [flag for flag in flags if _given(args, flag) in (None, "")]
    if missing:
        raise InputError(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required for --channel {channel}.")


def _refuse(args: argparse.Namespace, channel: str, flag: str, why: str) -> None:
    if _given(args, flag) is not None:
        raise InputError(f"{flag} does not apply to --channel {channel}: {why}.")


def _columns(text: str | None) -> tuple[str, ...]:
    return tuple(c.strip() for c in (text or "").split(",") if c.strip())


def _channel_request(args: argparse.Namespace) -> tuple[Any, dict[str, Any], str, str | None]:
    """Check the flags ``--channel`` needs; returns (send function, its arguments, what the ledger name hashes, sender)."""
    from sendframe.campaign import send as sending

    channel = args.channel
    sms_fields = {k: v for k, v in (("encoding", args.encoding), ("parts", args.parts)) if v is not None}
    if args.trans:
        sms_fields["trans"] = args.trans
    if channel in _NO_MESSAGE:
        _refuse(args, channel, "--message", _NO_MESSAGE[channel])
    else:
        _require(args, channel, "--message")
    if channel in ("sms", "landingsms"):
        _require(args, channel, "--from")
        if channel == "sms":
            return (lambda frame, **kw: sending.send_sms(frame, args.message, args.sender, **kw),
                    sms_fields, args.message, args.sender)
        # the default page shows the message, without the link to itself ({LAND_URL} has no value on the page)
        page_text = re.sub(r"\s*\{\s*LAND_URL[^}]*\}", "", args.message).strip()
        body = args.template_body or (None if args.template_id is not None else f"<p>{page_text}</p>")
        return (lambda frame, **kw: sending.send_landingsms(frame, args.message, args.sender, template_body=body,
                                                            template_id=args.template_id, **kw),
                sms_fields, args.message, args.sender)
    if channel == "mailing":
        _require(args, channel, "--subject", "--from-email")
        return (lambda frame, **kw: sending.send_mailing(frame, args.subject, args.message, from_email=args.from_email,
                                                         reply_to=args.reply_to or args.from_email, **kw),
                {}, args.message, args.sender or args.from_email)
    if channel in ("voice", "voiceAudio"):
        _refuse(args, channel, "--from", "calls come from the account's caller numbers")
        if channel == "voice":
            _require(args, channel, "--language", "--gender")
            return (lambda frame, **kw: sending.send_voice(frame, args.message, language=args.language,
                                                           gender=args.gender, **kw),
                    {}, "\x1f".join((args.message, args.language, args.gender)), None)
        _require(args, channel, "--audio-url")
        return (lambda frame, **kw: sending.send_voice_audio(frame, args.audio_url, **kw), {}, args.audio_url, None)
    _require(args, channel, "--template-id", "--from")  # whatsapp
    fields = {"header_fields": _columns(args.header_fields), "body_fields": _columns(args.body_fields),
              "cta_fields": _columns(args.cta_fields)}
    identity = "\x1f".join([str(args.template_id), *(",".join(v) for v in fields.values())])
    return (lambda frame, **kw: sending.send_whatsapp(frame, args.template_id, args.sender, **fields, **kw),
            {}, identity, args.sender)


def _send(args: argparse.Namespace) -> int:
    channel = args.channel
    if args.batch_size < 1 or args.batch_size > 1000:
        raise InputError(f"--batch-size must be between 1 and 1000 (got {args.batch_size}).")
    send_with, channel_fields, identity, sender = _channel_request(args)
    if args.notification_url and channel not in ("sms", "landingsms", "mailing"):
        raise InputError(f"--notification-url applies to sms and landingsms, not {channel}.")

    contacts = _contacts(args)
    column = _recipient_column(args)
    if column not in contacts.columns:
        raise InputError(f"--channel {channel} sends to the column {column!r}, which the contacts do not have; "
                         f"columns are: {', '.join(map(str, contacts.columns))}. Name it with "
                         f"{'--email-column' if channel == 'mailing' else '--phone-column'}.")
    skipped = _skipped_duplicates(args, contacts, column)
    to_send = contacts.loc[~skipped.to_numpy()].copy()
    if channel != "mailing":  # a number read_contacts could not repair is sent as written: the service rejects it (102)
        raw = f"{column}_raw"
        fallback = to_send[raw] if raw in to_send else pd.Series("", index=to_send.index)
        to_send[column] = to_send[column].fillna(fallback).fillna("")
    else:
        to_send[column] = to_send[column].fillna("")
    ledger = args.ledger or default_ledger_path(args.contacts, channel, identity, sender, args.campaign)
    common: dict[str, Any] = {
        "ledger": str(ledger), "batch_size": args.batch_size, "progress": not args.no_progress,
        "dry_run": args.dry_run, "campaign": args.campaign, "to_column": column,
        "resend_unknown": args.resend_unknown, "stop_after_unknown": args.stop_after_unknown or None,
    }
    if args.notification_url and channel != "mailing":  # email sends no notifications
        common["notification_url"] = args.notification_url
    result = send_with(to_send, **channel_fields, **common)
    result = result.reindex(contacts.index)
    if skipped.any():
        result["outcome"] = result["outcome"].astype(object).mask(skipped, SKIPPED_DUPLICATE)
    table = pd.concat([contacts[[column]].rename(columns={column: "recipient"}), result], axis=1)
    _write(table, args.out)
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
