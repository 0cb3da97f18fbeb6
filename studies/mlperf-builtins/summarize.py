"""The leave-one-system-out table of studies/mlperf-builtins: per machine, its runs predicted by the
profile fitted without its logs and by the built-in fitted to them (mrplan validate's summaries)."""
import os
import statistics
import sys


def read(path):
    """Median |error| of epoch, epochs and time to train; runs inside P10-P90; median P90/P10."""
    out, widths, inside = {}, [], 0
    for line in open(path):
        p = line.split()
        for q, label in (("epoch time", "epoch"), ("epochs", "epochs"), ("end-to-end time", "ttt")):
            if line.startswith(q + " ") and len(p) >= 3 and p[-2].endswith("%"):
                out[label] = p[-2]
        if len(p) == 6 and p[0].endswith(".record.json") and p[5] in ("yes", "NO"):
            widths.append(float(p[4]) / float(p[2]))
            inside += p[5] == "yes"
    out["inside"] = "%d/%d" % (inside, len(widths))
    out["width"] = "%.2f" % statistics.median(widths) if widths else "n/a"
    return out


root = sys.argv[1]
print("| machine | runs | left out: epoch | epochs | time to train | inside P10-P90 | P90/P10 "
      "| fitted to them: epoch | epochs | time to train | inside | P90/P10 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for m in sorted(os.listdir(root)):
    d = os.path.join(root, m)
    if not os.path.isdir(d):
        continue
    lo, own = read(os.path.join(d, "left-out.txt")), read(os.path.join(d, "own.txt"))
    cells = [lo.get(k, "n/a") for k in ("epoch", "epochs", "ttt", "inside", "width")]
    cells += [own.get(k, "n/a") for k in ("epoch", "epochs", "ttt", "inside", "width")]
    print("| %s | %s | %s |" % (m, lo["inside"].split("/")[1], " | ".join(cells)))
