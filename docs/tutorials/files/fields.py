#!/usr/bin/env python3
"""Pick fields out of gtsim's JSON results and print them as a table, one row per result.

  for w in 1 2; do gtsim run ... --param ways=$w --json - ; done | python3 docs/tutorials/files/fields.py params.ways cycles time_us

Reads the JSON objects on stdin one after the other; a field is a dotted path (metric names that contain
dots, as `metrics.smsp__inst_executed.sum`, work too); the header shows each path's last part (a metric's
whole name), or NAME for a field written NAME=PATH; floats are printed with 4 significant digits.
"""
import json
import sys


def get(obj, parts):
    if not parts:
        return obj
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if isinstance(obj, dict) and key in obj:
            return get(obj[key], parts[i:])
    return "-"


def fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def main():
    fields = sys.argv[1:]
    if not fields:
        sys.exit(__doc__)
    text, dec, pos, rows = sys.stdin.read(), json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        obj, pos = dec.raw_decode(text, pos)
        rows.append([fmt(get(obj, f.split("=")[-1].split("."))) for f in fields])
    head = [f.split("=")[0] if "=" in f else f[len("metrics."):] if f.startswith("metrics.")
            else f.split(".")[-1] for f in fields]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    for r in [head] + rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    main()
