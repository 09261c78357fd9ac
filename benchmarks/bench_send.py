"""Send an SMS campaign with everything on to the local sandbox: sendframe vs the analyst's httpx loops.

    python benchmarks/bench_send.py            # 100,000 contacts; one-per-request loop on 2,000, extrapolated
    python benchmarks/bench_send.py --quick    # 5,000 contacts; loop on 100 (smoke run)

Setup (not timed): a messy contact CSV (``messy_data.py``), ``sendframe sandbox`` and ``sendframe receive``
started as separate processes with ``python -m sendframe.cli`` as a user would.

Timed, in this one run, against the same sandbox with the same message (``messy_data.TEMPLATE``: a name,
an amount and ``{UNSUB_URL}``; parts 2, gsm-pt, a notificationUrl to the receiver, so delivery
notifications flow to it while sending):

- sendframe, what a user runs: ``read_contacts(csv)`` then ``msg.send(contacts, client=..., ledger=<file>)``
  (which plans the rows: skips invalid phones and repeats, validates every batch, journals each batch);
- the analyst's loop, one POST per recipient: ``read_csv`` + phonenumbers + str methods per row
  (``analyst.py``), then ``httpx.Client.post`` per recipient. Timed on ``--naive`` recipients and
  extrapolated linearly (said so below);
- the analyst who read the spec: the same preparation, then 1,000 recipients per POST with ``sub``,
  sequentially, no journal (on at most 100,000 contacts).

Between runs the benchmark waits until the sandbox has no step and no notification left to do. Prints
recipients/s of each, the ratios, and the CPU seconds of this process, the sandbox and the receiver during
each run (the machine may be shared: CPU says where the work went).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import httpx

import analyst
import sendframe
from messy_data import TEMPLATE, write_messy_csv
from sandbox_process import cpu_seconds, start_receiver, start_sandbox, stop, wait_until_idle

SENDER = "Shop"
AUTH = ("demo", "demo-password")


def measure(processes: dict[str, int], work: Callable[[], object]) -> dict[str, float]:
    before = {name: cpu_seconds(pid) for name, pid in processes.items()}
    wall0, cpu0 = time.perf_counter(), time.process_time()
    work()
    run = {"wall": time.perf_counter() - wall0, "client": time.process_time() - cpu0}
    run.update({name: cpu_seconds(pid) - before[name] for name, pid in processes.items()})
    return run


def analyst_text(name: str, amount: str) -> str:
    """The analyst fills name and amount with str methods; {UNSUB_URL} is the service's to fill."""
    return analyst.render(name, amount, "{UNSUB_URL}")


def one_per_request(client: httpx.Client, csv: Path, count: int, url: str) -> int:
    rows = analyst.read_rows(csv, count * 2)  # enough rows for ``count`` recipients after skips
    prepared = analyst.prepare(rows, unsub_link="{UNSUB_URL}")
    sent = 0
    for position, recipient in list(zip(prepared.positions, prepared.recipients, strict=True))[:count]:
        body = {"message": analyst_text(rows["name"][position], rows["amount"][position]), "to": [recipient],
                "from": SENDER, "parts": 2, "encoding": "gsm-pt", "notificationUrl": url}
        sent += client.post("/api/rest/sms", json=body).status_code == 202
    return sent


def batched_by_hand(client: httpx.Client, csv: Path, count: int, url: str) -> int:
    rows = analyst.read_rows(csv, count)
    prepared = analyst.prepare(rows, unsub_link="{UNSUB_URL}")
    sent = 0
    for start in range(0, len(prepared.positions), 1000):
        chunk = prepared.positions[start:start + 1000]
        body = {"message": "Hola {name}, tu saldo es {amount} EUR. Baja: {UNSUB_URL}",
                "to": prepared.recipients[start:start + 1000], "from": SENDER, "parts": 2, "encoding": "gsm-pt",
                "notificationUrl": url,
                "sub": [{"name": analyst.first_upper(rows["name"][p]), "amount": analyst.dot_comma(rows["amount"][p])}
                        for p in chunk]}
        answer = client.post("/api/rest/sms", json=body, timeout=120)
        sent += sum(item["accepted"] for item in answer.json()["result"])
    return sent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument("--recipients", type=int, help="contacts of the sendframe run (default 100000; 5000 quick)")
    parser.add_argument("--naive", type=int, help="recipients of the one-per-request loop (default 2000; 100 quick)")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args(argv)
    n = args.recipients or (5_000 if args.quick else 100_000)
    m = args.naive or (100 if args.quick else 2_000)
    by_hand = min(n, 100_000)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv = write_messy_csv(folder / "contacts.csv", n)
        server, base_url = start_sandbox(["--db", str(folder / "sandbox.sqlite")])
        receiver, url = start_receiver(folder / "callbacks.log")
        processes = {"sandbox": server.pid, "receiver": receiver.pid}
        msg = sendframe.sms(TEMPLATE, sender=SENDER, parts=2, encoding="gsm-pt", notification_url=url)
        try:
            with sendframe.Client(base_url, *AUTH) as client, warnings.catch_warnings(), \
                    httpx.Client(base_url=base_url, auth=AUTH, timeout=30) as http:
                warnings.simplefilter("ignore")  # the skipped rows are said once per send; counted below
                client.send_sms({"message": "warm-up", "to": ["34600999999"], "from": SENDER})
                timing: dict[str, float] = {}

                def ours() -> None:
                    start = time.perf_counter()
                    contacts = sendframe.read_contacts(csv)
                    timing["read_contacts"] = time.perf_counter() - start
                    result = msg.send(contacts, client=client, ledger=folder / "bench.ledger.sqlite",
                                      batch_size=args.batch_size, concurrency=args.concurrency, progress=False)
                    timing["sent"] = int(result["outcome"].isin(["accepted", "rejected", "unknown"]).sum())
                    timing["accepted"] = int((result["outcome"] == "accepted").sum())

                fast = measure(processes, ours)
                drained = wait_until_idle(folder / "sandbox.sqlite")
                hand = measure(processes, lambda: timing.__setitem__(
                    "by_hand", batched_by_hand(http, csv, by_hand, url)))
                wait_until_idle(folder / "sandbox.sqlite")
                naive = measure(processes, lambda: timing.__setitem__("naive", one_per_request(http, csv, m, url)))
        finally:
            stop(server)
            stop(receiver)

    sent = timing["sent"]
    send_wall = fast["wall"] - timing["read_contacts"]
    rate = sent / fast["wall"]
    naive_rate = timing["naive"] / naive["wall"]
    hand_rate = timing["by_hand"] / hand["wall"]
    print(f"contacts: {n:,} (messy CSV); message {TEMPLATE!r}, parts 2, gsm-pt, notificationUrl to a "
          f"`sendframe receive` process, {{UNSUB_URL}} filled by the sandbox per recipient")
    print(f"sendframe: read_contacts {timing['read_contacts']:.2f} s + msg.send with a ledger file {send_wall:.2f} s: "
          f"{sent:,} recipients sent ({timing['accepted']:,} accepted) = {rate:,.0f} recipients/s end to end, "
          f"{sent / send_wall:,.0f}/s for the send (goal >= 20,000/s); batch {args.batch_size}, concurrency "
          f"{args.concurrency}")
    print(f"sandbox:   done with the carrier steps and notifications of sendframe's run {drained:.1f} s after it ended")
    print(f"analyst, 1,000 per POST with sub, sequential, no journal: {timing['by_hand']:,} recipients in "
          f"{hand['wall']:.2f} s = {hand_rate:,.0f}/s")
    print(f"analyst, one POST per recipient: {timing['naive']:,} recipients in {naive['wall']:.2f} s = "
          f"{naive_rate:,.0f}/s; extrapolated linearly to {sent:,}: {sent / naive_rate:,.0f} s")
    print(f"ratio: {rate / naive_rate:.1f}x faster batched than one POST per recipient (target >= 50x); "
          f"{rate / hand_rate:.2f}x the analyst's own batches")
    for name, run in (("sendframe", fast), ("by hand, batched", hand), ("one per POST", naive)):
        print(f"cpu {name:<17}: client {run['client']:6.2f} s, sandbox {run['sandbox']:6.2f} s, receiver "
              f"{run['receiver']:6.2f} s over {run['wall']:.2f} s wall")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
