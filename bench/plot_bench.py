#!/usr/bin/env python3
"""Table and plot for `rgpu bench`.

usage: bench/plot_bench.py BENCH.json OUT.md OUT.png

BENCH.json is {"local": {...}, "tcp": {...}, "raw_tcp": {...}} as written by
`rgpu bench`: rgpu_bench.cu's figures for local CUDA and for each rgpu path,
and rgpu-transport-bench's for each raw transport. Every rgpu figure is shown
with its ratio to local and, where one applies, to the raw transport; with
both tcp and tls, a second table gives each tls figure beside tcp's (and
each "ucx zero copy" figure beside "ucx staged"'s, as tools/gpu-suite.sh
measures them). The
plot draws bandwidth against copy size, one line per path and kind.
"""
import json
import sys

SCALARS = [
    ("startup_ms", "program start-up: first CUDA call (ms)"),
    ("lat64_pinned_h2d_us", "64 B copy, pinned H2D (us)"),
    ("lat64_pinned_d2h_us", "64 B copy, pinned D2H (us)"),
    ("lat64_pageable_h2d_us", "64 B copy, pageable H2D (us)"),
    ("lat64_pageable_d2h_us", "64 B copy, pageable D2H (us)"),
    ("launch_async_us", "async kernel launch (us)"),
    ("launch_sync_us", "launch + synchronize round trip (us)"),
    ("func_attributes_us", "cudaFuncGetAttributes, asked before (us)"),
]
CURVES = ["bw_pinned_h2d", "bw_pinned_d2h", "bw_pageable_h2d", "bw_pageable_d2h"]


def human(n):
    n = int(n)
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n} {unit}"
        n //= 1024
    return f"{n} TB"


def raw_for(raw, key):
    if raw is None:
        return None
    if key.startswith("lat64"):
        return raw.get("rtt64_us")
    if key.startswith("bw"):
        return raw.get("bulk_send_gbs_256MB" if "h2d" in key else "bulk_recv_gbs_256MB")
    return None


def beside(rows, base, other, title):
    """A table of each figure of path `other` beside path `base`'s."""
    lines = ["", f"{title} (same run; latencies: lower is better, bandwidths: higher):", "",
             f"| figure | {base} | {other} | {other}/{base} |", "|---|---:|---:|---:|"]
    for key, label, loc, per_path in rows:
        lines.append(f"| {label} | {per_path[base]:.2f} | {per_path[other]:.2f} | "
                     f"{per_path[other] / per_path[base]:.2f} |")
    return lines


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        data = json.load(f)
    local = data["local"]
    paths = [p for p in data if p not in ("local",) and not p.startswith("raw_")]
    lines = ["| figure | local | " + " | ".join(f"{p} | {p}/local | {p}/raw {p}" for p in paths) + " |",
             "|---|---:|" + "---:|---:|---:|" * len(paths)]
    rows = [(k, label, local[k], {p: data[p][k] for p in paths}) for k, label in SCALARS]
    for curve in CURVES:
        for size in (str(32 << 20), str(256 << 20), str(1 << 30)):
            if size in local.get(curve, {}):
                rows.append((curve, f"{curve[3:].replace('_', ' ')} {human(size)} (GB/s)", local[curve][size],
                             {p: data[p][curve][size] for p in paths}))
    for key, label, loc, per_path in rows:
        cells = []
        for p in paths:
            raw = raw_for(data.get("raw_" + p), key)
            cells.append(f"{per_path[p]:.2f} | {per_path[p] / loc:.2f} | " +
                         (f"{per_path[p] / raw:.2f}" if raw else "-"))
        lines.append(f"| {label} | {loc:.2f} | " + " | ".join(cells) + " |")
    for p in paths:
        raw = data.get("raw_" + p)
        if raw:
            lines.append(f"\nraw {p} in the same run: 64 B round trip {raw['rtt64_us']:.1f} us, one-stream bulk "
                         f"{raw['bulk_send_gbs_256MB']:.2f} GB/s send, {raw['bulk_recv_gbs_256MB']:.2f} GB/s receive.")
        if raw and "stripes" in raw:
            ratios = ", ".join(
                f"{curve[3:].replace('_', ' ')} {human(size)} {data[p][curve][size] / raw[side]:.2f}"
                for curve, side in (("bw_pageable_h2d", "striped_send_gbs_256MB"),
                                    ("bw_pageable_d2h", "striped_recv_gbs_256MB"))
                for size in (str(256 << 20), str(1 << 30)) if size in data[p].get(curve, {}))
            lines.append(f"raw {p} striped over {raw['stripes']} connections, as rgpu stripes large pageable "
                         f"copies: {raw['striped_send_gbs_256MB']:.2f} GB/s send, "
                         f"{raw['striped_recv_gbs_256MB']:.2f} GB/s receive; rgpu's ratios to it: {ratios}.")
    if "ucx zero copy" in paths and "ucx staged" in paths:
        lines += beside(rows, "ucx staged", "ucx zero copy", "ucx bulk copies in place beside staged ones")
    if "tls" in paths and "tcp" in paths:
        lines += beside(rows, "tcp", "tls", "tcp with TLS beside plain tcp")
        raw_tcp, raw_tls = data.get("raw_tcp"), data.get("raw_tls")
        if raw_tcp and raw_tls:
            for key, label in (("rtt64_us", "raw 64 B round trip (us)"),
                               ("bulk_send_gbs_256MB", "raw one-stream send (GB/s)"),
                               ("bulk_recv_gbs_256MB", "raw one-stream receive (GB/s)"),
                               ("striped_send_gbs_256MB", "raw striped send (GB/s)"),
                               ("striped_recv_gbs_256MB", "raw striped receive (GB/s)")):
                if key in raw_tcp and key in raw_tls:
                    lines.append(f"| {label} | {raw_tcp[key]:.2f} | {raw_tls[key]:.2f} | "
                                 f"{raw_tls[key] / raw_tcp[key]:.2f} |")
            on = {True: "on", False: "off", None: "not reported"}
            lines.append(f"\nkernel TLS (the `tls` module): send {on[raw_tls.get('kernel_tls_send')]}, "
                         f"receive {on[raw_tls.get('kernel_tls_recv')]}.")
    with open(argv[2], "w") as f:
        f.write("\n".join(lines) + "\n")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench: matplotlib not available, no plot", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(14, 5), sharey=True)
    for ax, direction in zip(axes, ("h2d", "d2h")):
        for path in ["local"] + paths:
            for mem, style in (("pinned", "-"), ("pageable", "--")):
                curve = data[path].get(f"bw_{mem}_{direction}", {})
                sizes = sorted(curve, key=int)
                ax.plot([int(s) for s in sizes], [curve[s] for s in sizes], style, marker="o", markersize=3,
                        label=f"{path} {mem}")
        for p in paths:
            raw = raw_for(data.get("raw_" + p), "bw_" + direction)
            if raw:
                ax.axhline(raw, color="gray", linestyle=":", label=f"raw {p}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("copy size (bytes)")
        ax.set_title(f"cudaMemcpy {direction.upper()} bandwidth")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("GB/s")
    fig.tight_layout()
    fig.savefig(argv[3], dpi=120)


if __name__ == "__main__":
    main(sys.argv)
