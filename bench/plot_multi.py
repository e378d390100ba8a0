"""The report of tests/gpu/run_multi.sh: the scaling table (local, rgpu over
shm, rgpu over tcp; 1..N GPUs), peer-copy bandwidth, the DDP comparison and
the samples' verdicts, as Markdown on stdout; the plot as OUT/multi.png
(skipped, and said so, where matplotlib is missing).
usage: plot_multi.py OUT GPUS DEVICES CRASHES
Exit status 1 when a program's result is missing or its checks failed."""
import json
import sys
from pathlib import Path

out, gpus, devices, crashes = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
RUNS = ["local", "shm", "tcp"]
LABEL = {"local": "local CUDA", "shm": "rgpu shm", "tcp": "rgpu tcp"}
ok = True


def load(name, run):
    global ok
    text = (out / f"{name}-{run}.json").read_text().strip() if (out / f"{name}-{run}.json").exists() else ""
    passed = "RESULT PASS" in (out / f"{name}-{run}.txt").read_text(errors="replace") if (
        out / f"{name}-{run}.txt").exists() else False
    if not text or not passed:
        ok = False
        return None
    return json.loads(text)


scaling = {run: load("scaling", run) for run in RUNS}
peer = {run: load("peer", run) for run in RUNS}
md = [f"## Aggregation: one application on {gpus} GPUs of {gpus} servers", "",
      f"One `rgpu-server` per GPU, each exporting only its GPU on a port and Unix socket of its own; "
      f"`RGPU_DEVICES={devices}`. Server workers crashed: {crashes}.", "",
      "### Compute-bound scaling (bench/multi_gpu_scaling.cu: fixed total work, one host thread and stream per GPU)",
      ""]
first = next((s for s in scaling.values() if s), None)
if first:
    md.append(f"{first['fma']:.3g} fused multiply-adds in all, split over n GPUs; best of the repeats; "
              "every split's values identical to one GPU's and to the CPU's.")
    md.append("")
md += ["| run | GPUs | seconds | speed-up | efficiency | time vs local | speed-up vs local |",
       "|---|---|---|---|---|---|---|"]
for run in RUNS:
    s = scaling[run]
    if not s:
        md.append(f"| {LABEL[run]} | - | FAILED (see scaling-{run}.txt) | | | | |")
        continue
    t1 = s["runs"][0]["seconds"]
    for r in s["runs"]:
        local = scaling["local"]["runs"][r["gpus"] - 1] if scaling["local"] else None
        speedup = t1 / r["seconds"]
        vs_local = f"{r['seconds'] / local['seconds']:.3f}" if local else "-"
        scaling_vs_local = (f"{speedup / (scaling['local']['runs'][0]['seconds'] / local['seconds']):.3f}"
                            if local else "-")
        md.append(f"| {LABEL[run]} | {r['gpus']} | {r['seconds']:.3f} | {speedup:.2f} | {speedup / r['gpus']:.3f} | "
                  f"{vs_local} | {scaling_vs_local} |")
checksums = {r["checksum"] for s in scaling.values() if s for r in s["runs"]}
if len(checksums) > 1:
    ok = False
    md.append("")
    md.append(f"**Checksums differ between runs**: {sorted(checksums)}")
if scaling["local"]:
    n = scaling["local"]["runs"][-1]["gpus"]
    local_speedup = scaling["local"]["runs"][0]["seconds"] / scaling["local"]["runs"][-1]["seconds"]
    md.append("")
    for run in ("shm", "tcp"):
        s = scaling[run]
        if not s:
            continue
        speedup = s["runs"][0]["seconds"] / s["runs"][-1]["seconds"]
        md.append(f"- {LABEL[run]}: speed-up on {n} GPUs {speedup:.2f} (target >= {0.9 * n:.1f}: "
                  f"{'met' if speedup >= 0.9 * n else 'NOT met'}); {speedup / local_speedup:.3f} of local's "
                  f"{local_speedup:.2f} (target >= 0.95: {'met' if speedup >= 0.95 * local_speedup else 'NOT met'})")

md += ["", "### Peer copies between devices 0 and 1 (bench/peer_copy_bench.cu, cudaMemcpyPeer, GB/s)", ""]
sizes = sorted({int(k) for p in peer.values() if p for k in p["bw"]["0to1"]})
md.append("| bytes | " + " | ".join(f"{LABEL[r]} {d}" for r in RUNS for d in ("0->1", "1->0")) + " |")
md.append("|---" * (1 + 2 * len(RUNS)) + "|")
for size in sizes:
    cells = []
    for run in RUNS:
        for d in ("0to1", "1to0"):
            v = peer[run]["bw"][d].get(str(size)) if peer[run] else None
            cells.append(f"{v:.2f}" if v is not None else "-")
    md.append(f"| {size} | " + " | ".join(cells) + " |")
md += ["", "Peer access: " + "; ".join(f"{LABEL[r]} {'enabled' if peer[r]['peer_access'] else 'not offered'}"
                                   for r in RUNS if peer[r])]

md += ["", "### PyTorch DistributedDataParallel (bench/ddp_train.py)", ""]
ddp = out / "ddp.md"
if ddp.exists():
    md.append(ddp.read_text().rstrip())
else:
    ok = False
    md.append("no result: see ddp.txt")

for t in ("shm", "tcp"):
    table = out / f"samples-{t}" / "corpus.md"
    if table.exists():
        md += ["", f"### Multi-GPU programs built elsewhere (SAMPLES_DIR) over {t}: local vs rgpu, by verdict", "",
               table.read_text().rstrip()]



def nccl_via(run):
    transports = sorted({t for r in run["ranks"] or [] for t in r.get("nccl_transports", [])})
    return f" (via {', '.join(transports)})" if transports else ""


# The figures again in a few lines, so that the end of the output says it all.
summary = ["", "### Summary", ""]
if scaling["local"]:
    last = {run: s["runs"][-1] for run, s in scaling.items() if s}
    speedups = {run: scaling[run]["runs"][0]["seconds"] / r["seconds"] for run, r in last.items()}
    n = last["local"]["gpus"]
    summary.append(f"- speed-up on {n} GPUs: " + "; ".join(
        f"{LABEL[run]} {v:.2f}" + ("" if run == "local" else f" ({v / speedups['local']:.3f} of local)")
        for run, v in speedups.items()))
if sizes:
    top = str(sizes[-1])
    summary.append(f"- cudaMemcpyPeer of {sizes[-1] >> 20} MB, 0->1: " + "; ".join(
        f"{LABEL[run]} {peer[run]['bw']['0to1'][top]:.2f} GB/s" for run in RUNS if peer[run]))
if (out / "ddp.json").exists():
    summary.append("- DDP: " + "; ".join(
        f"{r['label']} {r['backend']} " + ("FAILED" if r["ranks"] is None else
                                           "losses match" if r.get("matches_local", True) else "losses DIFFER")
        + (" (NCCL failed)" if r.get("nccl_failure") else nccl_via(r)) for r in json.loads((out / "ddp.json").read_text())))
for t in ("shm", "tcp"):
    rows_file = out / f"samples-{t}" / "corpus.json"
    if rows_file.exists():
        rows = json.loads(rows_file.read_text())
        counted = [r for r in rows if r["passed"] is not None]
        summary.append(f"- samples over {t}: {sum(r['passed'] for r in counted)}/{len(counted)} match local"
                       f" ({len(rows) - len(counted)} not passing locally, not counted): "
                       + ", ".join(f"{r['name']} {'ok' if r['passed'] else 'FAIL'}" for r in counted))
md += summary

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for run in RUNS:
        s = scaling[run]
        if s:
            t1 = s["runs"][0]["seconds"]
            left.plot([r["gpus"] for r in s["runs"]], [t1 / r["seconds"] for r in s["runs"]], "o-", label=LABEL[run])
    left.plot([1, gpus], [1, gpus], "k:", label="ideal")
    left.set(xlabel="GPUs (one per server)", ylabel="speed-up over 1 GPU", title="Compute-bound scaling")
    left.set_xticks(range(1, gpus + 1))
    left.legend()
    for run in RUNS:
        if peer[run]:
            bw = peer[run]["bw"]["0to1"]
            right.plot([int(k) for k in bw], list(bw.values()), "o-", label=LABEL[run])
    right.set(xscale="log", yscale="log", xlabel="bytes", ylabel="GB/s", title="cudaMemcpyPeer, device 0 -> 1")
    right.legend()
    fig.tight_layout()
    fig.savefig(out / "multi.png", dpi=110)
    md += ["", "Plot: `multi.png` (speed-up against GPUs; peer-copy GB/s against size)."]
except ImportError:
    md += ["", "No plot: matplotlib is not installed for this Python."]

print("\n".join(md))
sys.exit(0 if ok else 1)
