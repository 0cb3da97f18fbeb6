#!/usr/bin/env python3
"""The format and command-line pages cannot drift from the program:
- docs/plan-format.md and docs/workload-format.md name (in a code span) every key the readers accept at
  every level; the readers' own key tables are read back from their unknown-key errors;
- docs/profile-format.md holds `mrplan profile --keys` verbatim;
- docs/cli.md is what scripts/cli_doc.py writes from the program's --help (skipped without mrplan-exec).
Usage: format_docs.py MRPLAN REPO"""
import os
import re
import subprocess
import sys
import tempfile

PLAN = """name: p
workload: {workload}
workload_options: {{size: 32}}
machine: summit
dataset: {{train_samples: 64}}
target: {{metric: val_mse, value: 0.1}}
comm: {{overlap: true}}
io: {{staging: none}}
data: {{dir: d}}
method: mrmf
stages:
  - name: fusion1
    lr_decay: [{{epoch: 1, factor: 0.5}}]
    models:
      - {{name: low, resolution: 2, gpus: 1, local_batch: 2, stop: {{switch_rule: {{patience: 2, epsilon: 0.1}}}}}}
      - {{name: high, resolution: 1, gpus: 1, local_batch: 2, init: scratch, stop: {{epochs: 1}}}}
    handoff: {{fuse: {{bottom_from: low, top_from: high}}}}
  - {{name: finetune, resolution: 1, gpus: 2, local_batch: 2, stop: {{target: true}}}}
"""

WORKLOAD = """name: w
input: {channels: 1, spatial: [8, 8]}
labels: {elements: 1}
ops:
  - {name: conv1, kind: conv, filters: 2, kernel: 3}
  - {name: flatten, kind: flatten}
"""


def keys_expected(mrplan, command, path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    run = subprocess.run([mrplan] + command + [path], capture_output=True, text=True, timeout=60)
    m = re.search(r"unknown key \(expected one of: ([^)]*)\)", run.stderr)
    if not m:
        sys.exit(f"FAIL: no unknown-key error from {' '.join(command)} on\n{text}\n{run.stdout}{run.stderr}")
    return [k.strip() for k in m.group(1).split(",")]


def with_stray_key(text, anchor, where):
    """`text` with `zzz_stray: 1` added inside the map that `anchor` opens (flow or block)."""
    i = text.index(anchor) + len(anchor)
    return text[:i] + (where % "zzz_stray: 1") + text[i:]


def check_keys(mrplan, work, doc, command, base, places):
    named = {w for span in re.findall(r"`([^`]*)`", open(doc, encoding="utf-8").read()) for w in re.findall(r"\w+", span)}
    missing = set()
    for anchor, where in places:
        for key in keys_expected(mrplan, command, os.path.join(work, "in.yaml"), with_stray_key(base, anchor, where)):
            if key not in named:
                missing.add(key)
    if missing:
        print(f"FAIL: {os.path.basename(doc)} does not name: {', '.join(sorted(missing))}")
    return not missing


def main():
    mrplan, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
    ok = True
    with tempfile.TemporaryDirectory() as work:
        wpath = os.path.join(work, "w.yaml")
        with open(wpath, "w", encoding="utf-8") as f:
            f.write(WORKLOAD)
        plan = PLAN.format(workload="cosmoflow-mrt")
        ok &= check_keys(mrplan, work, f"{repo}/docs/plan-format.md", ["plan"], plan, [
            ("name: p\n", "%s\n"), ("workload_options: {", "%s, "), ("dataset: {", "%s, "), ("target: {", "%s, "),
            ("comm: {", "%s, "), ("io: {", "%s, "), ("data: {", "%s, "), ("  - name: fusion1\n", "    %s\n"),
            ("lr_decay: [{", "%s, "), ("{name: low, ", "%s, "), ("switch_rule: {", "%s, "), (", stop: {", "%s, "),
            ("handoff: {", "%s, "), ("fuse: {", "%s, "), ("{name: finetune, ", "%s, ")])
        ok &= check_keys(mrplan, work, f"{repo}/docs/workload-format.md", ["workload", "--yaml"], WORKLOAD, [
            ("name: w\n", "%s\n"), ("input: {", "%s, "), ("labels: {", "%s, "), ("{name: conv1, ", "%s, ")])
    keys = subprocess.run([mrplan, "profile", "--keys"], capture_output=True, text=True, check=True).stdout
    page = open(f"{repo}/docs/profile-format.md", encoding="utf-8").read()
    m = re.search(r"<!-- generated: mrplan profile --keys -->\n(.*?)<!-- end generated -->", page, re.S)
    if not m or m.group(1) != keys:
        print("FAIL: docs/profile-format.md's table is not `mrplan profile --keys`: paste its output between the markers")
        ok = False
    if os.path.exists(os.path.join(os.path.dirname(mrplan), "mrplan-exec")):
        sys.path.insert(0, f"{repo}/scripts")
        import cli_doc
        if cli_doc.document(mrplan) != open(f"{repo}/docs/cli.md", encoding="utf-8").read():
            print("FAIL: docs/cli.md differs from the program: scripts/cli_doc.py build/default/mrplan > docs/cli.md")
            ok = False
    else:
        print("note: no mrplan-exec beside mrplan: docs/cli.md not checked")
    print("format pages: OK" if ok else "format pages: FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
