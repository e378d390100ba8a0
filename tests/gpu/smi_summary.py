#!/usr/bin/env python3
"""One line from `rgpu smi --json` samples (one JSON document a line): how
many samples, the most sessions seen on a GPU at once, their processes,
memory in use and the utilisation NVML reported."""
import json
import sys

samples = []
for line in open(sys.argv[1]):
    try:
        samples.append(json.loads(line))
    except json.JSONDecodeError:
        pass
most, processes, used, utilization = 0, set(), 0, []
for s in samples:
    for server in s.get("servers", []):
        for gpu in server.get("gpus", []):
            sessions = gpu["sessions_without_job"] + [p for j in gpu["jobs"].values() for p in j["sessions"]]
            most = max(most, len(sessions))
            processes.update(p["process"] for p in sessions)
            used = max(used, gpu.get("memory_total", 0) - gpu.get("memory_free", 0))
            if gpu.get("utilization") is not None:
                utilization.append(gpu["utilization"])
util = f"utilisation min {min(utilization)} max {max(utilization)} %" if utilization else "no utilisation"
print(f"{len(samples)} samples; at most {most} sessions at once ({', '.join(sorted(processes)) or 'none'}); "
      f"at most {used >> 20} MiB of the GPU in use; {util}")
