#!/usr/bin/env python3
"""The README's tour is what mrplan prints: every `$ mrplan ...` command of the README's code blocks
is run, and each output line the README shows under it must be a line of the real output, in the
same order (a block may leave lines out, never change one). Usage: readme_tour.py MRPLAN README."""
import os
import shlex
import subprocess
import sys
import tempfile


def tour(readme):
    """(command, shown lines) for each `$ mrplan` line of the README's code blocks."""
    steps, inside, current = [], False, None
    for line in open(readme, encoding="utf-8").read().splitlines():
        if line.startswith("```"):
            inside, current = not inside, None
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            current = None
            if line.startswith("$ mrplan "):
                current = (line[2:].split("  #")[0].strip(), [])
                steps.append(current)
        elif current and line.strip():
            current[1].append(line.rstrip())
    return steps


def main():
    mrplan, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    steps = tour(readme)
    if not steps:
        sys.exit(f"FAIL: no `$ mrplan` commands in {readme}")
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for command, shown in steps:
            argv = [mrplan] + shlex.split(command)[1:]
            run = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=600)
            real = [l.rstrip() for l in (run.stdout + run.stderr).splitlines()]
            if run.returncode != 0 and not any(l.startswith("mrplan: error:") for l in shown):
                print(f"FAIL: `{command}` exits {run.returncode}:\n" + "\n".join(real))
                failed += 1
                continue
            at = 0
            for line in shown:
                while at < len(real) and real[at] != line:
                    at += 1
                if at == len(real):
                    print(f"FAIL: `{command}`: the README shows\n  {line}\nwhich it does not print (in this order); it prints:\n  " + "\n  ".join(real))
                    failed += 1
                    break
                at += 1
    if failed:
        sys.exit(1)
    print(f"readme tour: {len(steps)} commands, every line shown is printed")


if __name__ == "__main__":
    main()
