#!/usr/bin/env python3
"""Executable documents: run the commands in docs/tutorials/*.md and README.md, rewrite their output.

Convention (docs/tutorials/README.md says the same for page authors):

  A fenced block whose info string is `console` is owned by this script:

      ```console
      $ gtsim waves --hw hw_configs/h200-sxm.yaml --gemm 1024x1024x1024 --tile 128x128
      ...output, written by this script...
      $ gtsim run ... \\
          --param n=1024         (a line ending in a backslash continues the command)
      ...output...
      ```

  Each line starting with `$ ` is a command (bash, run from the repository root, `gtsim` on the PATH
  meaning $GTSIM, default build/cli/gtsim); every other line of the block is the output of the command
  above it (stdout and stderr together) and is replaced when the page is regenerated. A command must
  exit 0 (write `|| true` after one that is meant to fail); `| head -3` shows only the first lines.
  Other fenced blocks (```sh, ``` ...) are not run.

  Volatile fields are masked with `*`, both when writing and when comparing: host seconds, simulated
  instructions or events per host second, slowdown, dates, the git revision in `gtsim --version`, the
  repository's absolute path. Everything else the tool prints must be the same on every run.

Usage:
  scripts/tutorials.sh [--check] [-j N] [PAGE...]     (default pages: docs/tutorials/*.md README.md)

  without --check: run every command and rewrite the output lines in place;
  --check: rewrite nothing; print a diff for each page whose shown output differs and exit 1.
  Exit 2 when a command fails or times out (its output is shown).
"""

import argparse
import concurrent.futures
import difflib
import glob
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE_RE = re.compile(r"^(`{3,}|~{3,})\s*(.*)$")
COMMAND_TIMEOUT_S = 300

# (pattern, replacement): applied to every output line, when writing and when comparing.
MASKS = [
    (re.compile(r"\b\d+(\.\d+)?(e[+-]?\d+)? s host"), "* s host"),
    (re.compile(r"\b\d+(\.\d+)?(e[+-]?\d+)? ?([kMG] )?(simulated )?(warp inst|events|inst|points)/s"),
     lambda m: "* " + (m.group(3) or "") + (m.group(4) or "") + m.group(5) + "/s"),
    (re.compile(r"slowdown \d+(\.\d+)?(e[+-]?\d+)?x"), "slowdown *x"),
    (re.compile(r"\b\d+(\.\d+)?(e[+-]?\d+)? ?s (wall|host|elapsed)\b"), r"* s \3"),
    (re.compile(r'"(sim_wall_seconds|host_seconds|wall_seconds|elapsed_s)": ?[0-9.e+-]+'), r'"\1": *'),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"), "*"),
    (re.compile(r"(gtsim \d+\.\d+\.\d+) \([0-9a-f]{7,40}(-dirty)?\)"), r"\1 (*)"),
    (re.compile(r'"(git_revision|revision|git)": ?"[^"]*"'), r'"\1": "*"'),
    (re.compile(r"\beta \d+(\.\d+)?s\b"), "eta *s"),
]


def mask(line):
    line = line.replace(ROOT + "/", "").replace(ROOT, ".")
    for pattern, repl in MASKS:
        line = pattern.sub(repl, line)
    return line.rstrip()


def parse(text):
    """Split a page into chunks: plain text lines, and console blocks as lists of command strings."""
    lines = text.split("\n")
    chunks = []  # ("text", line) | ("block", [ [cmd lines] ... ], original block lines)
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if m and m.group(2).strip() != "console":
            # Another fenced block (```sh, ````markdown ...): copied as it is, nothing inside runs.
            j = i + 1
            while j < len(lines) and lines[j].strip() != m.group(1):
                j += 1
            chunks.extend(("text", l, None) for l in lines[i:j + 1])
            i = j + 1
        elif m:
            j = i + 1
            while j < len(lines) and lines[j].strip() != m.group(1):
                j += 1
            if j == len(lines):
                raise ValueError(f"line {i + 1}: ```console block is not closed")
            body = lines[i + 1:j]
            commands = []
            k = 0
            while k < len(body):
                if body[k].startswith("$ "):
                    cmd = [body[k]]
                    while cmd[-1].endswith("\\") and k + 1 < len(body):
                        k += 1
                        cmd.append(body[k])
                    commands.append(cmd)
                k += 1
            chunks.append(("block", commands, lines[i:j + 1]))
            i = j + 1
        else:
            chunks.append(("text", lines[i], None))
            i += 1
    return chunks


def run_command(cmd_lines, bindir, log):
    script = "\n".join(cmd_lines)[2:]  # drop the "$ "
    env = dict(os.environ)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env.setdefault("LC_ALL", "C")
    start = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=COMMAND_TIMEOUT_S)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the command's whole process group: bash and its gtsim
        out, _ = proc.communicate()
        out += f"\n(timed out after {COMMAND_TIMEOUT_S} s)".encode()
        rc = 124
    out = out.decode("utf-8", "replace")
    seconds = time.monotonic() - start
    log(f"{seconds:6.1f} s  {cmd_lines[0][2:][:90]}")
    # A progress bar rewrites its line with \r: keep what the line ends as.
    lines = [mask(l.split("\r")[-1]) for l in out.rstrip("\n").split("\n")] if out.strip() else []
    return lines, rc, seconds


def render(page, bindir, log):
    with open(page) as f:
        text = f.read()
    out, failures = [], []
    for kind, value, original in parse(text):
        if kind == "text":
            out.append(value)
            continue
        out.append(original[0])
        for cmd in value:
            lines, rc, _ = run_command(cmd, bindir, log)
            out.extend(cmd)
            out.extend(lines)
            if rc != 0:
                failures.append((cmd, rc, lines))
        out.append(original[-1])
    return text, "\n".join(out), failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="pages run at once (default: the number of CPUs); a page's commands run in order")
    ap.add_argument("pages", nargs="*", help="pages (default: docs/tutorials/*.md README.md)")
    args = ap.parse_args()
    pages = args.pages or sorted(glob.glob(os.path.join(ROOT, "docs/tutorials/*.md"))) + [
        os.path.join(ROOT, "README.md")]
    pages = [os.path.abspath(p) for p in pages]
    gtsim = os.path.abspath(os.environ.get("GTSIM", os.path.join(ROOT, "build/cli/gtsim")))
    if not os.access(gtsim, os.X_OK):
        print(f"tutorials: no gtsim at {gtsim} (set GTSIM)", file=sys.stderr)
        return 2
    lock = threading.Lock()

    def log(s):
        with lock:
            print(s, file=sys.stderr, flush=True)

    differ, failed, total = [], [], time.monotonic()
    with tempfile.TemporaryDirectory() as bindir:
        os.symlink(gtsim, os.path.join(bindir, "gtsim"))

        def one(page):
            rel = os.path.relpath(page, ROOT)
            try:
                return rel, render(page, bindir, lambda s: log(f"{rel}: {s.strip()}")), None
            except ValueError as e:
                return rel, None, str(e)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one, pages))
    for page, (rel, result, error) in zip(pages, results):
        if error:
            log(f"{rel}: {error}")
            failed.append(rel)
            continue
        old, new, failures = result
        for cmd, rc, lines in failures:
            failed.append(rel)
            log(f"{rel}: command exited {rc}:\n  " + "\n  ".join(cmd) + "\n" + "\n".join(lines[-20:]))
        if args.check:
            if old != new:
                differ.append(rel)
                diff = difflib.unified_diff(old.split("\n"), new.split("\n"), rel + " (shown)",
                                            rel + " (printed now)", lineterm="", n=1)
                print("\n".join(diff) + "\n")
        elif new != old:
            with open(page, "w") as f:
                f.write(new)
            log(f"rewrote {rel}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    log(f"tutorials: {len(pages)} pages in {time.monotonic() - total:.1f} s wall, "
        f"{usage.ru_utime + usage.ru_stime:.1f} s cpu, {max(1, args.jobs)} at once"
        + (f"; differ: {', '.join(differ)}" if differ else "")
        + (f"; failed: {', '.join(sorted(set(failed)))}" if failed else ""))
    if failed:
        return 2
    if differ:
        print("tutorials: shown output differs from what the tool prints; regenerate with "
              "scripts/tutorials.sh and re-read the page's conclusions", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
