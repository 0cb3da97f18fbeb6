#!/usr/bin/env python3
"""One line per run record (time to target, epochs per stage and model, final metric); with --table,
the mean +- sd of time to target per study and plan, as docs/validation/mini-mrmf.md reports them."""
import json
import statistics
import sys
from collections import defaultdict


def epochs(r):
    parts = []
    for s in r["stages"]:
        ms = s["models"]
        if len(ms) == 1:
            parts.append(f"{s['name']} {ms[0]['epochs']:g}")
        else:
            parts.append(s["name"] + " " + "/".join(f"{m['name']} {m['epochs']:g}" for m in ms))
    return ", ".join(parts)


def line(path):
    r = json.load(open(path))
    last = r["stages"][-1]["models"][0]["per_epoch"][-1]["metric"]
    t = r["totals"]
    fusion = sum(s.get("fusion_s", 0) for s in r["stages"])
    return (f"{r['plan']:20s} {'reached' if t['reached_target'] else 'NOT reached':11s} {t['time_to_target_s']:6.1f} s "
            f"(fusion {fusion:.2f} s)  final {r['target']['metric']} {last:.4f}  epochs: {epochs(r)}")


def table(paths):
    by = defaultdict(list)
    for p in paths:
        r = json.load(open(p))
        by[r["plan"]].append(r)
    print(f"\n{'plan':20s} {'runs':>4s} {'reached':>7s} {'time to target (s)':>22s} {'median':>7s}  per seed")
    for plan, rs in sorted(by.items()):
        ts = [r["totals"]["time_to_target_s"] for r in rs]
        ok = sum(r["totals"]["reached_target"] for r in rs)
        sd = statistics.stdev(ts) if len(ts) > 1 else 0.0
        print(f"{plan:20s} {len(rs):4d} {ok:7d} {statistics.mean(ts):14.1f} +- {sd:5.1f} {statistics.median(ts):7.1f}  "
              + " ".join(f"{t:.1f}" for t in ts))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--table"]
    if "--table" in sys.argv:
        table(args)
    else:
        for p in args:
            print(line(p))
