"""Exit non-zero unless two Records trained the same: every model's per-epoch loss and metric equal
(timings aside). Usage: same_training.py A/record.json B/record.json LABEL"""
import json
import sys


def trace(path):
    r = json.load(open(path))
    return [(m["name"], e["loss"], e["metric"]) for s in r["stages"] for m in s["models"] for e in m["per_epoch"]]


a, b = trace(sys.argv[1]), trace(sys.argv[2])
if a != b:
    sys.exit(f"FAIL: {sys.argv[3]}: the epochs differ:\n{a}\n{b}")
