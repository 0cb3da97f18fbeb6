#!/usr/bin/env python3
"""The README's tour is what mrplan prints: every `$ mrplan ...` command of the README's code blocks
is run, and each output line the README shows under it must be a line of the real output, in the
same order (a block may leave lines out, never change one). The commands of the `sh` blocks (data,
runs, calibration: the exec and MPI suites run them) are not run here, but each subcommand they name
must exist and each --option they give must be one its --help lists. Usage: readme_tour.py MRPLAN README."""
import os
import re
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


def sh_commands(mrplan, readme):
    """(subcommand path, options) of every `mrplan ...` line in the README's sh blocks."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(readme)), "scripts"))
    from cli_doc import help_text, subcommands
    out, inside, text = [], False, open(readme, encoding="utf-8").read()
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```sh"
            continue
        if not inside or "mrplan " not in line:
            continue
        words = shlex.split(line.split("  #")[0].split(" # ")[0])
        words = words[words.index("mrplan") + 1:]
        path = []
        for w in words:
            if w not in subcommands(help_text(mrplan, path)):
                break
            path.append(w)
        out.append((path or words[:1], [w.split("=")[0] for w in words if w.startswith("--")]))
    return out


def check_sh_commands(mrplan, readme):
    failed = 0
    for path, options in sh_commands(mrplan, readme):
        helps = subprocess.run([mrplan] + path + ["--help"], capture_output=True, text=True, timeout=60)
        if helps.returncode != 0 or not re.search(rf"^Usage: \S*mrplan(-exec)? {re.escape(' '.join(path))} ", helps.stdout, re.M):
            print(f"FAIL: `mrplan {' '.join(path)} --help` exits {helps.returncode}: {helps.stderr.strip()}")
            failed += 1
            continue
        for option in options:
            if not re.search(rf"(^|[ ,]){re.escape(option)}\b", helps.stdout, re.M):
                print(f"FAIL: the README gives `mrplan {' '.join(path)} {option}`, which its --help does not list")
                failed += 1
    return failed


def main():
    mrplan, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    steps = tour(readme)
    if not steps:
        sys.exit(f"FAIL: no `$ mrplan` commands in {readme}")
    failed = check_sh_commands(mrplan, readme) if os.path.exists(os.path.join(os.path.dirname(mrplan), "mrplan-exec")) else 0
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
