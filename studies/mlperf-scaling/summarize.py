"""Per pair: the larger run's measured steady epoch (median over its logs of the median epoch after
the first, validation included), mrplan's prediction (third epoch) and linear scaling's, and errors;
then its epochs to target (median over its logs) against mrplan's, fitted with the other systems'
runs, the prior profile's, and the smaller run's unchanged."""
import glob, json, math, os, random, re, statistics, sys

out = sys.argv[1]


def steady_epoch(record):
    per = record["stages"][0]["models"][0]["per_epoch"]
    return statistics.median(e["epoch_s"] for e in per[1:] if e.get("fraction", 1) >= 1)


def records(folder):
    return [json.load(open(f)) for f in sorted(glob.glob(os.path.join(folder, "*.record.json")))]


def measured(recs):
    return statistics.median(steady_epoch(r) for r in recs), recs[0]["stages"][0]


def epochs(recs):
    return statistics.median(r["stages"][0]["epochs"] for r in recs)


def time_to_train(recs):
    return statistics.median(r["totals"]["time_to_target_s"] for r in recs)


rows, errs, lin_errs, points, epoch_rows = [], [], [], [], []
# development / held-out -> the larger epoch's |errors| (mrplan's, linear scaling's), the epochs to
# target's and time to train's, the runs inside their band, and the bands' P90/P10
by_set = {}
epoch_errs = {"mrplan": [], "prior": [], "unchanged": []}
train_errs, p50_errs, inside, runs, bands, band_rows = [], [], 0, 0, [], []
for d in sorted(glob.glob(os.path.join(out, "*/"))):
    name = os.path.basename(d.rstrip("/"))
    small_recs, large_recs = records(os.path.join(d, "small")), records(os.path.join(d, "large"))
    small_s, small = measured(small_recs)
    large_s, large = measured(large_recs)
    predicted = json.load(open(os.path.join(d, "predicted.json")))
    pred = predicted["stages"][0]["models"][0]["per_epoch"][2]["epoch_s"]
    linear = small_s * small["gpus"] / large["gpus"]
    e, le = (pred - large_s) / large_s, (linear - large_s) / large_s
    errs.append(abs(e)), lin_errs.append(abs(le))
    this = by_set.setdefault(open(os.path.join(d, "set")).read().strip(),
                             {"epoch": [], "linear": [], "epochs": [], "train": [], "p50": [], "inside": 0, "runs": 0, "band": [],
                              "repeats": []})
    this["epoch"].append(abs(e)), this["linear"].append(abs(le))
    points.append((name, small["gpus"], small_s, large["gpus"], large_s, pred, linear, e, le))
    lb = lambda s: s["global_batch"] // s["gpus"]
    small_e, large_e = epochs(small_recs), epochs(large_recs)
    fit_e = predicted["stages"][0]["epochs"]
    train_s, pred_train_s = time_to_train(large_recs), predicted["totals"]["time_to_target_s"]
    train_errs.append(abs(pred_train_s - train_s) / train_s)
    validation = open(os.path.join(d, "validate.txt")).read()
    covered = re.search(r"coverage: (\d+) of (\d+) runs", validation)
    inside, runs = inside + int(covered.group(1)), runs + int(covered.group(2))
    band = re.search(r"large/\S+\s+\S+\s+(\S+)\s+\S+\s+(\S+)\s+(yes|NO)", validation)
    bands.append(float(band.group(2)) / float(band.group(1)))
    this["epochs"].append(abs(fit_e - large_e) / large_e), this["train"].append(train_errs[-1]), this["band"].append(bands[-1])
    this["inside"] += int(covered.group(1))
    this["runs"] += int(covered.group(2))
    this["repeats"].append([r["totals"]["time_to_target_s"] for r in large_recs])
    # the band and every larger run's time to train, for bands.png
    runs_ttt = re.findall(r"large/\S+\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(?:yes|NO)", validation)
    band_rows.append((name, [float(x) for x in runs_ttt[0][1:]], [float(r[0]) for r in runs_ttt]))
    # the band's P50 (predict --samples' "P50"), beside the point prediction at the fitted values
    p50 = float(runs_ttt[0][2])
    p50_errs.append(abs(p50 - train_s) / train_s), this["p50"].append(p50_errs[-1])
    prior_e = json.load(open(os.path.join(d, "predicted-prior.json")))["stages"][0]["epochs"]
    cells = []
    for key, v in (("mrplan", fit_e), ("prior", prior_e), ("unchanged", small_e)):
        epoch_errs[key].append(abs(v - large_e) / large_e)
        cells.append(f"{v:g} | {100 * (v - large_e) / large_e:+.0f}%")
    epoch_rows.append(f"| {name} | {small['global_batch']} | {small_e:g} | {large['global_batch']} | {large_e:g} | " + " | ".join(cells) +
                      f" | {train_s:.0f} | {pred_train_s:.0f} | {100 * (pred_train_s - train_s) / train_s:+.0f}% "
                      f"| {p50:.0f} | {100 * (p50 - train_s) / train_s:+.0f}% |")
    rows.append(f"| {name} | {small['gpus']} (local {lb(small)}) | {large['gpus']} (local {lb(large)}) | {small_s:.2f} | {large_s:.2f} "
                f"| {pred:.2f} | {100 * e:+.1f}% | {linear:.2f} | {100 * le:+.1f}% |")
print("| pair | calibrated on GPUs | predicted GPUs | small epoch s | large epoch s measured | mrplan | error | linear | error |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print(f"\nmedian |error|: mrplan {100 * statistics.median(errs):.1f}%, linear scaling {100 * statistics.median(lin_errs):.1f}% over {len(rows)} pairs"
      + "".join(f"; {name} set: mrplan {100 * statistics.median(t['epoch']):.1f}%, linear {100 * statistics.median(t['linear']):.1f}% "
                f"over {len(t['epoch'])}" for name, t in sorted(by_set.items())))
print("\nEpochs to target at the larger run's global batch:\n")
print("| pair | small batch | small epochs | large batch | large epochs measured | mrplan | error | prior profile | error "
      "| unchanged | error | time to train s measured | mrplan | error | band's P50 | error |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
print("\n".join(epoch_rows))
med = {k: 100 * statistics.median(v) for k, v in epoch_errs.items()}
print(f"\nmedian |error| of the epochs to target: mrplan {med['mrplan']:.0f}%, prior profile {med['prior']:.0f}%, "
      f"the smaller run's unchanged {med['unchanged']:.0f}%; of the time to train (staging included): mrplan "
      f"{100 * statistics.median(train_errs):.0f}% (the band's P50 {100 * statistics.median(p50_errs):.0f}%); {inside} of {runs} "
      f"larger runs inside their predicted P10-P90 "
      f"of the time to train (median P90/P10 {statistics.median(bands):.1f})")
for name, t in sorted(by_set.items()):
    n = len(t["epochs"])
    print(f"{name} set ({n} pair{'s' if n > 1 else ''}): epochs to target {100 * statistics.median(t['epochs']):.0f}%, time to train "
          f"{100 * statistics.median(t['train']):.0f}% (the band's P50 {100 * statistics.median(t['p50']):.0f}%), {t['inside']} of "
          f"{t['runs']} runs inside P10-P90, median P90/P10 "
          f"{statistics.median(t['band']):.1f}")


def floor(repeats):
    """The larger runs' spread of time to train within a pair (log space, pooled about each pair's
    mean), and the median |error| a prediction at each pair's true centre would still make against the
    median of its runs (normal draws, a fixed seed): what no model can get under."""
    repeated = [xs for xs in repeats if len(xs) > 1]
    ss = sum(sum((math.log(x) - statistics.mean(map(math.log, xs))) ** 2 for x in xs) for xs in repeated)
    sd, rng = math.sqrt(ss / sum(len(xs) - 1 for xs in repeated)), random.Random(0)
    misses = [statistics.median(abs(statistics.median(rng.gauss(0, sd) for _ in xs)) for _ in range(4000)) for xs in repeats]
    return sd, statistics.median(misses), sum(len(xs) for xs in repeated)


for name, t in sorted(by_set.items()):
    if not any(len(xs) > 1 for xs in t["repeats"]):
        continue
    sd, miss, n = floor(t["repeats"])
    print(f"{name} set's floor: its larger runs' time to train spreads {100 * sd:.1f}% within a pair ({n} runs); a prediction at "
          f"each pair's true centre would miss the median of its runs by {100 * miss:.0f}% (median over the pairs)")

# predicted vs measured epoch time against GPU count, one panel line per system (gnuplot data blocks)
with open(os.path.join(out, "scaling.dat"), "w") as f:
    for name, g1, s1, g2, s2, pred, lin, _, _ in points:
        f.write(f"# {name}\n{g1} {s1} {s1} {s1}\n{g2} {s2} {pred} {lin}\n\n\n")

# the larger runs' time to train against the predicted P10/P50/P90, each over the pair's measured
# median (one log axis for every pair)
with open(os.path.join(out, "bands.dat"), "w") as f:
    for i, (name, (p10, p50, p90), measured) in enumerate(band_rows):
        m = statistics.median(measured)
        f.write(f"{i} {name} {p50 / m:.4f} {p10 / m:.4f} {p90 / m:.4f} " + " ".join(f"{x / m:.4f}" for x in measured) + "\n")

# the larger run's error per pair, mrplan beside linear scaling (a bar chart: on the log-log plot
# above, 5-10% errors are too small to see)
with open(os.path.join(out, "errors.dat"), "w") as f:
    for name, *_, e, le in points:
        f.write(f"{name} {100 * e:.2f} {100 * le:.2f}\n")
