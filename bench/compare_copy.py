#!/usr/bin/env python3
"""Compare two copy_bench outputs (local run vs. rgpu run).

usage: bench/compare_copy.py LOCAL.json RGPU.json OUT.md [OUT.png] [--raw RAW.json]

Writes a markdown table  figure | local | rgpu | ratio rgpu/local  for every
numeric key both files share, latencies first. For latencies (us) a ratio
above 1 means rgpu is slower; for bandwidths (GB/s) a ratio below 1 does.
With OUT.png and matplotlib importable, also draws both as bar charts
(latency and bandwidth side by side, log scale); without matplotlib the
plot is skipped with a note on stderr. With --raw (rgpu-transport-bench
output, measured in the same run) a last column sets each rgpu figure against
the raw transport: 64-byte round trip for latencies, one-stream bulk
throughput for bandwidths.
"""
import json
import sys


def numeric(d):
    return {k: float(v) for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def raw_figure(raw, key):
    """The raw-transport figure a copy figure is bounded by."""
    if key.startswith("lat"):
        return raw.get("rtt64_us")
    return raw.get("bulk_send_gbs_256MB" if "h2d" in key else "bulk_recv_gbs_256MB")


def main(argv):
    raw = None
    if "--raw" in argv:
        i = argv.index("--raw")
        with open(argv[i + 1]) as f:
            raw = json.load(f)
        argv = argv[:i] + argv[i + 2:]
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    with open(argv[1]) as f:
        local_raw = json.load(f)
    with open(argv[2]) as f:
        rgpu_raw = json.load(f)
    local, rgpu = numeric(local_raw), numeric(rgpu_raw)
    keys = [k for k in local if k in rgpu]
    keys.sort(key=lambda k: not k.startswith("lat"))  # latencies first; stable: file order kept
    missing = sorted(set(local) ^ set(rgpu))

    lines = [f"Copy benchmark: local vs rgpu ({local_raw.get('device', '?')})", "",
             "| figure | local | rgpu | ratio rgpu/local |" + (" raw tcp | ratio rgpu/raw |" if raw else ""),
             "|---|---:|---:|---:|" + ("---:|---:|" if raw else "")]
    for k in keys:
        ratio = rgpu[k] / local[k] if local[k] else float("inf")
        row = f"| {k} | {local[k]:.3f} | {rgpu[k]:.3f} | {ratio:.2f} |"
        if raw:
            r = raw_figure(raw, k)
            row += f" {r:.3f} | {rgpu[k] / r:.2f} |" if r else " - | - |"
        lines.append(row)
    lines += ["", "lat64_*: median 64-byte cudaMemcpy latency, microseconds (lower is better).",
              "bw_*: best-of-5 cudaMemcpy bandwidth, GB/s = 1e9 bytes/s (higher is better)."]
    if missing:
        lines.append(f"Only in one file (not compared): {', '.join(missing)}")
    with open(argv[3], "w") as f:
        f.write("\n".join(lines) + "\n")

    if len(argv) == 5:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("compare_copy: matplotlib not available, no plot", file=sys.stderr)
            return
        groups = [("64-byte latency (us, lower is better)", [k for k in keys if k.startswith("lat")]),
                  ("bandwidth (GB/s, higher is better)", [k for k in keys if k.startswith("bw")])]
        fig, axes = plt.subplots(1, 2, figsize=(14, 5))
        for ax, (title, ks) in zip(axes, groups):
            x = range(len(ks))
            ax.bar([i - 0.2 for i in x], [local[k] for k in ks], 0.4, label="local")
            ax.bar([i + 0.2 for i in x], [rgpu[k] for k in ks], 0.4, label="rgpu")
            ax.set_xticks(list(x))
            ax.set_xticklabels([k.split("_", 1)[1] for k in ks], rotation=45, ha="right", fontsize=8)
            ax.set_yscale("log")
            ax.set_title(title)
            ax.legend()
        fig.tight_layout()
        fig.savefig(argv[4], dpi=120)


if __name__ == "__main__":
    main(sys.argv)
