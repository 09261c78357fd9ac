"""The ``sendframe`` command.

Each subcommand's flags and body live beside the code they drive, in a module exposing
``add_arguments(name, parser)`` and ``run(name, args) -> int``; only the chosen one is imported.

    sendframe sandbox --port 8080 --db sandbox.sqlite
    sendframe send contacts.csv --channel sms --message "Hi {name}" --from Shop
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import warnings
from typing import Any

from sendframe.errors import SendframeError, SendframeWarning

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("sendframe.demo", "run the sample campaign end to end against the embedded sandbox"),
    "sandbox": ("sendframe.sandbox.command", "serve the reference implementation of the messaging API"),
    "send": ("sendframe.campaign.command", "send a campaign from a contact table (resumable with --ledger)"),
    "preview": ("sendframe.campaign.command", "show the text each recipient would receive"),
    "estimate": ("sendframe.campaign.command", "encoding, parts and cost per recipient, with totals"),
    "receive": ("sendframe.delivery.command", "receive delivery notifications durably"),
    "report": ("sendframe.notebook.command", "write the delivery dashboard as one offline HTML file"),
}


def build_parser(selected: str | None) -> argparse.ArgumentParser:
    """Build the parser; only ``selected`` gets its own flags (so only its module is imported)."""
    parser = argparse.ArgumentParser(prog="sendframe", description="Messaging campaigns from DataFrames.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what is happening")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            importlib.import_module(module_name).add_arguments(name, sub_parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``sendframe`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    selected = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(selected if selected in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    module = importlib.import_module(SUBCOMMANDS[args.command][0])
    with warnings.catch_warnings():
        warnings.showwarning = _plain_warnings(args.command, warnings.showwarning)
        try:
            return int(module.run(args.command, args) or 0)
        except SendframeError as exc:
            print(f"sendframe {args.command}: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"sendframe {args.command}: interrupted", file=sys.stderr)
            return 130


def _plain_warnings(command: str, default: Any) -> Any:
    """Show sendframe's own warnings as ``sendframe COMMAND: message`` lines (no file and line number)."""
    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, SendframeWarning):
            print(f"sendframe {command}: {message}", file=sys.stderr)
        else:
            default(message, category, *args, **kwargs)

    return show


if __name__ == "__main__":
    raise SystemExit(main())
