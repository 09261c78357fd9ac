"""``sendframe sandbox``: serve the reference implementation of the messaging API on 127.0.0.1.

    sendframe sandbox --port 8080 --db sandbox.sqlite [--clock manual] [--seed N]
                      [--account USER:PASSWORD[:CHANNEL,...]] [--carrier-config PATH]
                      [--allow-callback-network CIDR ...] [--trust-proxy]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sendframe.sandbox.server import serve
from sendframe.sandbox.state import quiet_collector

__all__ = ["add_arguments", "default_db_path", "run"]


def default_db_path() -> Path:
    """Where the sandbox keeps its state by default: ``$XDG_DATA_HOME/sendframe/sandbox.sqlite``
    (``~/.local/share/sendframe/sandbox.sqlite`` without XDG_DATA_HOME).

        >>> default_db_path().name
        'sandbox.sqlite'
    """
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sendframe" / "sandbox.sqlite"


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    """The flags of ``sendframe sandbox``."""
    parser.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (0 picks a free one; default 8080)")
    parser.add_argument("--db", default=None,
                        help=f"SQLite file of the sandbox state, or :memory: (default {default_db_path()})")
    parser.add_argument("--clock", choices=("real", "manual"), default="real",
                        help="manual: time moves only with POST /_sandbox/advance")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the simulated carrier's outcomes (default: the config file's, else 0)")
    parser.add_argument("--account", action="append", default=[], metavar="USER:PASSWORD[:CHANNEL,...]",
                        help="add an account (sms only unless channels are named); repeatable")
    parser.add_argument("--ip", action="append", default=[], metavar="ADDRESS",
                        help="register another client IP address for every account (loopback always is)")
    parser.add_argument("--carrier-config", default=None, metavar="PATH",
                        help="JSON file of carrier profiles (rates, latencies, MNCs; see docs/sandbox.md)")
    parser.add_argument("--allow-callback-network", action="append", default=[], metavar="CIDR",
                        help="let delivery notifications reach this private network, e.g. 10.0.0.0/8 (loopback "
                             "always may; link-local and metadata addresses never); repeatable")
    parser.add_argument("--trust-proxy", action="store_true",
                        help="behind a reverse proxy on this machine: take the client's address from its "
                             "X-Forwarded-For (off by default: the header is ignored)")


def run(name: str, args: argparse.Namespace) -> int:
    """Serve until interrupted; print the base URL once listening."""
    db = args.db or str(default_db_path())
    if db != ":memory:":
        Path(db).expanduser().parent.mkdir(parents=True, exist_ok=True)
        db = str(Path(db).expanduser())

    def announce(base_url: str) -> None:
        print(base_url, flush=True)
        print(f"sendframe sandbox: state in {db}; account demo / demo-password; Ctrl+C to stop",
              file=sys.stderr, flush=True)

    quiet_collector()
    serve(port=args.port, db=db, clock=args.clock, seed=args.seed, accounts=args.account, ips=args.ip,
          carrier_config=args.carrier_config, allow_networks=args.allow_callback_network, trust_proxy=args.trust_proxy,
          announce=announce, log_level="info" if getattr(args, "verbose", False) else "warning")
    return 0
