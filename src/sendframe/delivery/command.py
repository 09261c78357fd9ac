"""``sendframe receive``: receive delivery notifications durably into a log file.

    sendframe receive --port 8099 --log callbacks.log --param ref=spring

The notificationUrl to send with is printed on start-up (first line of standard output).
The token comes from ``--token``, else ``SENDFRAME_RECEIVER_TOKEN``, else it is generated;
reuse the same token when restarting so notifications still queued at the service get through.
"""

from __future__ import annotations

import argparse
import os
import sys

from sendframe.delivery.receiver import Receiver
from sendframe.errors import ConfigurationError


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    """Flags of ``sendframe receive``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    parser.add_argument("--log", required=True, help="append-only log file the notifications are written to")
    parser.add_argument("--token", default=None, help="secret part of the callback path (or SENDFRAME_RECEIVER_TOKEN)")
    parser.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE",
        help="your own parameter added to the notificationUrl and passed back (repeatable)",
    )
    parser.add_argument("--max-batch", type=int, default=4096, help="most notifications per group commit")
    parser.add_argument("--write-timeout", type=float, default=10.0,
                        help="seconds a client may leave its answers unread before it is dropped (default 10)")
    parser.add_argument("--idle-timeout", type=float, default=30.0,
                        help="seconds a client may take to send a request, or stay idle between them (default 30)")
    parser.add_argument("--public-url", default=None,
                        help="address the service reaches this receiver at, e.g. https://dlr.example.com behind a "
                             "proxy or tunnel (default http://HOST:PORT; required with --host 0.0.0.0)")


def run(name: str, args: argparse.Namespace) -> int:
    """Serve until interrupted; prints the notificationUrl first."""
    params: dict[str, str] = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigurationError(f"--param {item!r} must have the form NAME=VALUE.")
        params[key] = value
    token = args.token or os.environ.get("SENDFRAME_RECEIVER_TOKEN") or None
    receiver = Receiver(args.log, host=args.host, port=args.port, token=token, params=params, max_batch=args.max_batch,
                        public_url=args.public_url, write_timeout=args.write_timeout, idle_timeout=args.idle_timeout)

    def announce() -> None:
        print(receiver.notification_url, flush=True)
        print(f"receiving on {args.host}:{receiver.port}, writing {args.log}; Ctrl-C to stop", file=sys.stderr,
              flush=True)

    receiver.serve_forever(on_ready=announce)
    return 0
