#!/usr/bin/env python3
"""studies/mlperf-scaling reproduces from the fixtures: every pair of ../shared/mlperf-logs (and the
repository's own logs) is predicted, and mrplan's epoch time beats linear scaling's on every pair
whose local batch changes and its median error over the development pairs is within 5% (issue 19's
goals); its epochs to target beat keeping the smaller run's.
Usage: mlperf_study.py MRPLAN REPO (skips, exit 77, without ../shared/mlperf-logs)."""
import os
import re
import subprocess
import sys
import tempfile


def percent(cell):
    return abs(float(cell.strip().rstrip("%")))


def main():
    mrplan, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
    if not os.path.isdir(os.path.join(repo, "..", "shared", "mlperf-logs")):
        print("no ../shared/mlperf-logs: skipped")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, MLPERF_OUT=out)
        run = subprocess.run(["bash", "studies/mlperf-scaling/run.sh", mrplan], cwd=repo, env=env, capture_output=True, text=True,
                             timeout=600)
        if run.returncode != 0:
            sys.exit(f"FAIL: the study exits {run.returncode}:\n{run.stdout}\n{run.stderr}")
        summary = open(os.path.join(out, "summary.md"), encoding="utf-8").read()
    failed = 0
    pairs = [l.split("|")[1:-1] for l in summary.splitlines() if re.match(r"\| \S+ \| \d+ \(local \d+\) \|", l)]
    if len(pairs) != 9:
        print(f"FAIL: {len(pairs)} pairs in the summary, expected 9:\n{summary}")
        failed += 1
    for name, small, large, _, _, _, error, _, linear in pairs:
        local = lambda cell: re.search(r"local (\d+)", cell).group(1)
        if local(small) != local(large) and percent(error) >= percent(linear):
            print(f"FAIL: {name.strip()}: mrplan {error.strip()} is not closer than linear scaling {linear.strip()}")
            failed += 1
    development = re.search(r"development set: mrplan ([\d.]+)%, linear ([\d.]+)%", summary)
    if not development or float(development.group(1)) > 5.0:
        print(f"FAIL: the development pairs' median epoch-time error is not within issue 19's 5%:\n{summary}")
        failed += 1
    epochs = re.search(r"epochs to target: mrplan (\d+)%, prior profile (\d+)%, the smaller run's unchanged (\d+)%", summary)
    if not epochs or int(epochs.group(1)) >= int(epochs.group(3)):
        print(f"FAIL: the epochs to target are not predicted better than the smaller run's unchanged:\n{summary}")
        failed += 1
    if failed:
        sys.exit(1)
    print(f"mlperf study: {len(pairs)} pairs; {development.group(0)}; {epochs.group(0)}")


if __name__ == "__main__":
    main()
