"""Per pair: the larger run's measured steady epoch (median over its logs of the median epoch after
the first, validation included), mrplan's prediction (third epoch) and linear scaling's, and errors."""
import glob, json, os, statistics, sys

out = sys.argv[1]


def steady_epoch(record):
    per = record["stages"][0]["models"][0]["per_epoch"]
    return statistics.median(e["epoch_s"] for e in per[1:] if e.get("fraction", 1) >= 1)


def measured(folder):
    recs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(folder, "*.record.json")))]
    return statistics.median(steady_epoch(r) for r in recs), recs[0]["stages"][0]


rows, errs, lin_errs, points = [], [], [], []
for d in sorted(glob.glob(os.path.join(out, "*/"))):
    name = os.path.basename(d.rstrip("/"))
    small_s, small = measured(os.path.join(d, "small"))
    large_s, large = measured(os.path.join(d, "large"))
    pred = json.load(open(os.path.join(d, "predicted.json")))["stages"][0]["models"][0]["per_epoch"][2]["epoch_s"]
    linear = small_s * small["gpus"] / large["gpus"]
    e, le = (pred - large_s) / large_s, (linear - large_s) / large_s
    errs.append(abs(e)), lin_errs.append(abs(le))
    points.append((name, small["gpus"], small_s, large["gpus"], large_s, pred, linear, e, le))
    lb = lambda s: s["global_batch"] // s["gpus"]
    rows.append(f"| {name} | {small['gpus']} (local {lb(small)}) | {large['gpus']} (local {lb(large)}) | {small_s:.2f} | {large_s:.2f} "
                f"| {pred:.2f} | {100 * e:+.1f}% | {linear:.2f} | {100 * le:+.1f}% |")
print("| pair | calibrated on GPUs | predicted GPUs | small epoch s | large epoch s measured | mrplan | error | linear | error |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print(f"\nmedian |error|: mrplan {100 * statistics.median(errs):.1f}%, linear scaling {100 * statistics.median(lin_errs):.1f}% over {len(rows)} pairs")

# predicted vs measured epoch time against GPU count, one panel line per system (gnuplot data blocks)
with open(os.path.join(out, "scaling.dat"), "w") as f:
    for name, g1, s1, g2, s2, pred, lin, _, _ in points:
        f.write(f"# {name}\n{g1} {s1} {s1} {s1}\n{g2} {s2} {pred} {lin}\n\n\n")

# the larger run's error per pair, mrplan beside linear scaling (a bar chart: on the log-log plot
# above, 5-10% errors are too small to see)
with open(os.path.join(out, "errors.dat"), "w") as f:
    for name, *_, e, le in points:
        f.write(f"{name} {100 * e:.2f} {100 * le:.2f}\n")
