#!/usr/bin/env python3
"""The sharing benchmark's report (tests/gpu/run_sharing.sh): from one json
line per tenant, per way of sharing and tenant count: aggregate steps/s,
each tenant's steps/s (min, mean), p99 step latency (worst tenant's),
fairness (slowest tenant over fastest), and issue 26's targets at 8 tenants
(rgpu + MPS >= 3x rgpu time slicing, >= 0.9x local MPS). The rgpu ways reach
the server over tcp; rgpu-mps-shm, over shm (tenants on the GPU's host).
    usage: sharing_report.py SHARING_JSONL OUT_DIR  -> OUT_DIR/sharing.md, sharing.png
"""
import collections
import json
import os
import sys

MODES = ["local", "local-mps", "rgpu-timeslice", "rgpu-mps", "rgpu-mps-shm"]


def summarise(rows):
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["mode"], r["clients"])].append(r)
    out = {}
    for (mode, n), rs in groups.items():
        ok = [r for r in rs if r["ok"]]
        rates = [r["steps"] / r["seconds"] for r in ok]
        out[(mode, n)] = {
            "failed": len(rs) - len(ok),
            "aggregate": sum(rates),
            "min": min(rates) if rates else 0.0,
            "mean": sum(rates) / len(rates) if rates else 0.0,
            "p99_us": max((r["p99_us"] for r in ok), default=0.0),
            "fairness": min(rates) / max(rates) if rates and max(rates) > 0 else 0.0,
            "late": sum(1 for r in rs if r.get("late")),
        }
    return out


def table(stats):
    lines = ["| way | tenants | aggregate steps/s | per tenant min / mean | p99 step (us) | fairness (min/max) | failed |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for mode in MODES:
        for n in sorted(k[1] for k in stats if k[0] == mode):
            s = stats[(mode, n)]
            lines.append(f"| {mode} | {n} | {s['aggregate']:.0f} | {s['min']:.0f} / {s['mean']:.0f} | "
                         f"{s['p99_us']:.0f} | {s['fairness']:.2f} | {s['failed']} |")
    # Tenants run side by side from a common start; one ready only after it
    # ran part of its window alone with fewer others.
    late = sum(s.get("late", 0) for s in stats.values())
    if late:
        lines.append(f"\n{late} tenant(s) were ready only after the common start (LATE in their logs).")
    return "\n".join(lines)


def targets(stats):
    def agg(mode):
        return stats.get((mode, 8), {}).get("aggregate", 0.0)
    mps, ts, local_mps = agg("rgpu-mps"), agg("rgpu-timeslice"), agg("local-mps")
    if not (mps and ts and local_mps):
        return "Targets at 8 tenants: not measured (a way or the count 8 is missing)."
    text = (f"Targets at 8 tenants: rgpu + MPS / rgpu time slicing = {mps / ts:.2f} (target >= 3: "
            f"{'met' if mps / ts >= 3 else 'NOT met'}); rgpu + MPS / local MPS = {mps / local_mps:.2f} "
            f"(target >= 0.9: {'met' if mps / local_mps >= 0.9 else 'NOT met'}).")
    if shm := agg("rgpu-mps-shm"):
        text += (f" Over shm: rgpu + MPS / local MPS = {shm / local_mps:.2f} "
                 f"(target >= 0.9: {'met' if shm / local_mps >= 0.9 else 'NOT met'}).")
    return text


def plot(stats, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for mode in MODES:
        ns = sorted(k[1] for k in stats if k[0] == mode)
        if not ns:
            continue
        a.plot(ns, [stats[(mode, n)]["aggregate"] for n in ns], marker="o", label=mode)
        b.plot(ns, [stats[(mode, n)]["p99_us"] for n in ns], marker="o", label=mode)
    for ax, title in ((a, "aggregate steps/s"), (b, "p99 step latency (us)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("tenants on one GPU")
        ax.set_title(title)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    return True


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    out_dir = sys.argv[2]
    stats = summarise(rows)
    text = "# Sharing one GPU (issue 26)\n\n" + table(stats) + "\n\n" + targets(stats) + "\n"
    if plot(stats, os.path.join(out_dir, "sharing.png")):
        text += "\n![sharing](sharing.png)\n"
    open(os.path.join(out_dir, "sharing.md"), "w").write(text)
    print(text)
    return 1 if any(s["failed"] for s in stats.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
