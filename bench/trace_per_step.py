#!/usr/bin/env python3
"""The calls one training step forwards, from the stderr of
`RGPU_TRACE=1 rgpu run -- python3 bench/apps_bench.py trace-steps` (or of a
rank of bench/ddp_train.py run with DDP_MARK_STEPS=1): for each model, the
ops traced between its markers, per step, with the client's time in them
(a synchronous call waits for its round trip; an asynchronous one only
sends), and how many of them the model's busiest thread made (the
application's own; the others come from its helper threads, such as
PyTorch's NCCL watchdog). A Markdown table, synchronous calls first, most
time first.

usage: trace_per_step.py STDERR_FILE"""
import re
import sys
from collections import defaultdict

# Markers written by bench/apps_bench.py and bench/ddp_train.py.
BEGIN = re.compile(r"^(?:apps_bench|ddp_train): steps (\S+) (\d+) begin$")
END = re.compile(r"^(?:apps_bench|ddp_train): steps (\S+) end$")
TRACE = re.compile(r"\btrace (\S+)( \[async\])? args=\d+B -> -?\d+ \(([0-9.]+) us\)(?: thread (\d+))?")


def count(lines):
    """{model: (steps, {(op, is_async): [calls, microseconds, {thread: calls}]})}"""
    models, current = {}, None
    for line in lines:
        line = line.rstrip("\n")
        if m := BEGIN.match(line):
            current = m.group(1)
            models[current] = (int(m.group(2)), defaultdict(lambda: [0, 0.0, defaultdict(int)]))
        elif END.match(line):
            current = None
        elif current and (m := TRACE.search(line)):
            entry = models[current][1][(m.group(1), bool(m.group(2)))]
            entry[0] += 1
            entry[1] += float(m.group(3))
            entry[2][m.group(4)] += 1
    return models


def busiest_thread(ops):
    """The thread that made the most calls (None when the trace names none)."""
    totals = defaultdict(int)
    for _, _, threads in ops.values():
        for thread, calls in threads.items():
            totals[thread] += calls
    return max(totals, key=totals.get) if totals else None


def table(models):
    out = []
    for model, (steps, ops) in models.items():
        main = busiest_thread(ops)
        out += [f"Calls forwarded per {model} training step (mean of {steps} warm steps):", "",
                "| op | kind | calls | on the busiest thread | client time |", "|---|---|---:|---:|---:|"]
        for (op, is_async), (calls, us, threads) in sorted(ops.items(), key=lambda kv: (kv[0][1], -kv[1][1])):
            own = f"{threads[main] / steps:g}" if main is not None else "-"
            out.append(f"| {op} | {'async' if is_async else 'sync'} | {calls / steps:g} | {own} | {us / steps:.0f} us |")
        if not ops:
            out.append("| (none) | | 0 | | 0 us |")
        out.append("")
    return "\n".join(out)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    with open(argv[1], errors="replace") as f:
        models = count(f)
    if not models:
        sys.exit(f"{argv[1]}: no traced steps (was RGPU_TRACE=1 set?)")
    print(table(models))


if __name__ == "__main__":
    main(sys.argv)
