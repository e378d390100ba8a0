"""The application timings (apps_bench.py) of one suite run as a Markdown
table: local CUDA, rgpu over each transport, and rgpu's ratio to local.
usage: apps_bench_report.py LOCAL.json NAME=RGPU.json..."""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return {}


local = load(sys.argv[1])
runs = [(arg.split("=", 1)[0], load(arg.split("=", 1)[1])) for arg in sys.argv[2:]]
head = "| figure | local | " + " | ".join(f"rgpu {n} | ratio {n}" for n, _ in runs) + " |"
print(head)
print("|---" * (2 + 2 * len(runs)) + "|")


def cell(v):
    if not isinstance(v, float):
        return str(v)
    return f"{v * 1e6:.1f} us" if v < 1e-3 else f"{v * 1e3:.1f} ms"


for key in local or {k for _, r in runs for k in r}:
    row = f"| {key.removesuffix('_s')} | {cell(local.get(key, '-'))} |"
    for _, r in runs:
        v, lv = r.get(key, "-"), local.get(key)
        ratio = f"{v / lv:.2f}" if isinstance(v, float) and isinstance(lv, float) and lv > 0 else "-"
        row += f" {cell(v)} | {ratio} |"
    print(row)
