"""Rehearsal at N in process with real servers; report per-frame buffer bytes and sharing."""
import sys, time, gc, tempfile
from pathlib import Path
sys.path.insert(0, "benchmarks")
import numpy as np, pandas as pd, pyarrow as pa
import sendframe
from messy_data import TEMPLATE, write_messy_csv
from sandbox_process import start_sandbox, start_receiver, stop, current_memory_mib, peak_memory_mib
from rehearsal import wait_for_finals

def buffers(obj, out):
    if isinstance(obj, pd.DataFrame):
        for c in obj.columns: buffers(obj[c], out)
        buffers(obj.index, out); return
    arr = obj.array if isinstance(obj, (pd.Series, pd.Index)) else obj
    if isinstance(arr, pd.Categorical):
        buffers(arr.codes, out); buffers(arr.categories, out); return
    pa_arr = getattr(arr, "_pa_array", None)
    if pa_arr is not None:
        for ch in pa_arr.chunks:
            for b in ch.buffers():
                if b is not None: out[b.address] = b.size
        return
    if isinstance(arr, pd.arrays.StringArray) or getattr(arr, "dtype", None) == object:
        np_ = np.asarray(arr, dtype=object)
        out[id(np_)] = sum(sys.getsizeof(x) for x in np_)  # approx
        return
    for a in ("_data", "_ndarray"):
        d = getattr(arr, a, None)
        if isinstance(d, np.ndarray):
            out[d.__array_interface__['data'][0]] = d.nbytes
            m = getattr(arr, "_mask", None)
            if isinstance(m, np.ndarray): out[m.__array_interface__['data'][0]] = m.nbytes
            return
    if isinstance(arr, np.ndarray):
        out[arr.__array_interface__['data'][0]] = arr.nbytes; return
    try:
        n = np.asarray(arr); out[id(arr)] = n.nbytes
    except Exception: pass

def cols(obj):
    res = {}
    for c in obj.columns:
        d = {}; buffers(obj[c], d); res[c] = (sum(d.values()), str(obj[c].dtype))
    return res

N = int(sys.argv[1])
folder = Path(tempfile.mkdtemp())
csv = folder / "c.csv"
write_messy_csv(csv, N, seed=12)
sandbox, base = start_sandbox(["--db", str(folder / "s.sqlite")])
receiver, url = start_receiver(folder / "cb.log")
frames = {}
try:
    with sendframe.Client(base, "demo", "demo-password") as client:
        import warnings; warnings.simplefilter("ignore")
        m0 = current_memory_mib()
        contacts = sendframe.read_contacts(csv)
        msg = sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="gsm-pt", notification_url=url, link_base="https://sndf.io")
        problems = msg.preflight(contacts)
        estimate = msg.estimate(contacts)
        result = msg.send(contacts, client=client, ledger=folder / "l.ledger", batch_size=500, concurrency=4, progress=False)
        accepted = pd.Index(result.loc[result["outcome"] == "accepted", "id"].astype("string").unique())
        callbacks, _, _ = wait_for_finals(folder / "cb.log", accepted, 600)
        records = sendframe.fetch_records(accepted, client=client)
        outcomes = sendframe.outcomes(result, callbacks, records, contacts, estimate=estimate)
        m1 = current_memory_mib()
        summary = sendframe.delivery_summary(outcomes, by="city")
        m2 = current_memory_mib()
finally:
    stop(sandbox); stop(receiver)
frames = dict(contacts=contacts, problems=problems, estimate=estimate, result=result, callbacks=callbacks,
              rec_messages=records.messages, rec_events=records.events, outcomes=outcomes)
allb = {}
per = {}
for name, f in frames.items():
    d = {}; buffers(f, d); per[name] = d
    for k, v in d.items(): allb[k] = v
owners = {}
for name, d in per.items():
    for k in d: owners.setdefault(k, []).append(name)
print(f"N={N} rss start {m0:.0f} before summary {m1:.0f} after {m2:.0f} peak {peak_memory_mib():.0f}")
print(f"unique buffer total {sum(allb.values())/2**20:.1f} MiB = {sum(allb.values())/N:.0f} B/row")
for name, d in per.items():
    tot = sum(d.values()); own = sum(v for k, v in d.items() if len(owners[k]) == 1)
    print(f"{name:14s} rows {len(frames[name]):>8,} total {tot/2**20:7.1f} MiB own {own/2**20:7.1f} MiB ({own/N:.0f} B/row)")
    for c, (b, dt) in sorted(cols(frames[name]).items(), key=lambda x: -x[1][0])[:12]:
        print(f"      {c:28s} {b/2**20:7.1f} MiB  {dt}")

import ctypes, collections
class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena","ordblks","smblks","hblks","hblkhd","usmblks","fsmblks","uordblks","fordblks","keepcost")]
libc = ctypes.CDLL(None); libc.mallinfo2.restype = MI
def mi():
    m = libc.mallinfo2(); return f"arena {m.arena/2**20:.0f} inuse {m.uordblks/2**20:.0f} free {m.fordblks/2**20:.0f} mmap {m.hblkhd/2**20:.0f}"
print("end rss", current_memory_mib(), mi(), "arrow", pa.total_allocated_bytes()/2**20)
gc.collect(); print("after gc", current_memory_mib())
from sendframe.memory import release_unused_memory
release_unused_memory(); print("after release", current_memory_mib(), mi())
objs = gc.get_objects()
cnt = collections.Counter(type(o).__name__ for o in objs)
print(len(objs), cnt.most_common(12))
strs = [o for o in objs if isinstance(o, (list, dict, tuple))]
print("containers", sum(sys.getsizeof(o) for o in strs)/2**20)
big = sorted(((sys.getsizeof(o), type(o).__name__) for o in objs if isinstance(o,(list,dict,tuple,set))), reverse=True)[:10]
print(big)
