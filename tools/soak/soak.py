#!/usr/bin/env python3
"""Soak: SESSIONS clients at once for SECONDS against a server of its own.

Each slot runs, one after another until the time is up: a valid program
through `rgpu run` (it must exit 0 and print "RESULT PASS"), a soak client
(rgpu-soak-client: random valid calls checked, invalid calls each expecting
its error, malformed frames the server must drop), or either of them killed
partway. The report gives calls made, errors returned, wrong results, clients
that hung, how long soak clients waited for their session (the server's
worker start-up under load), the daemon's and workers' crashes (the server's log) and GPU 0's free memory
before and after (cuMemGetInfo through a session; nvidia-smi when present).

usage: soak.py BUILD_DIR OUT_DIR --backend cuda|host-test [--sessions N]
               [--seconds D] [--port P] PROGRAM...
Exit status 0 when nothing crashed, no result was wrong, no client hung or
failed, and the memory came back.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def free_memory(build, server):
    """GPU 0's free and total bytes, through a session of its own."""
    out = subprocess.run([f"{build}/rgpu-soak-client", server, "--memory"], capture_output=True, text=True,
                         timeout=60)
    return json.loads(out.stdout) if out.returncode == 0 else None


def nvidia_smi_used():
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                         capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else None


class Totals:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = dict(calls=0, errors=0, wrong=0, malformed=0, program_runs=0, program_failures=0,
                      soak_clients=0, soak_failures=0, clients_killed=0, hung=0)
        self.failures = []
        self.open_s = []  # each soak client's wait for its session

    def add(self, **kw):
        with self.lock:
            for k, v in kw.items():
                self.n[k] += v

    def fail(self, what):
        with self.lock:
            self.failures.append(what)


def run_slot(slot, args, server, deadline, totals):
    rng = random.Random(args.seed * 1000 + slot)
    env = dict(os.environ, RGPU_LOG_LEVEL="error")
    while time.time() < deadline:
        roll = rng.random()
        killed = roll >= 0.8
        if args.programs and (roll < 0.4 or (killed and rng.random() < 0.5)):
            cmd = [f"{args.build}/rgpu", "run", "--server", server, "--", rng.choice(args.programs)]
            kind = "program"
        else:
            cmd = [f"{args.build}/rgpu-soak-client", server, str(rng.randint(50, 400)), str(rng.getrandbits(31))]
            kind = "soak"
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if killed:
            time.sleep(rng.uniform(0.02, 0.5))
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            totals.add(clients_killed=1)
            continue
        try:
            out, err = proc.communicate(timeout=args.call_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            totals.fail(f"{' '.join(cmd)} hung past {args.call_timeout} s: {err[-400:]}")
            totals.add(hung=1)
            continue
        if kind == "program":
            ok = proc.returncode == 0 and "RESULT PASS" in out
            totals.add(program_runs=1, program_failures=0 if ok else 1)
            if not ok:
                totals.fail(f"{cmd[-1]} exited {proc.returncode}: {(out + err)[-400:]}")
        else:
            counts = None
            for line in out.splitlines():
                if line.startswith("{"):
                    counts = json.loads(line)
            totals.add(soak_clients=1)
            if counts:
                totals.add(calls=counts["calls"], errors=counts["errors"], wrong=counts["wrong"],
                           malformed=counts["malformed"])
                with totals.lock:
                    totals.open_s.append(counts["open_s"])
            if proc.returncode != 0 or not counts:
                totals.add(soak_failures=1)
                totals.fail(f"soak client exited {proc.returncode}: {err[-400:]}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("programs", nargs="*")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--sessions", type=int, default=int(os.environ.get("RGPU_SOAK_SESSIONS", 64)))
    p.add_argument("--seconds", type=float, default=float(os.environ.get("RGPU_SOAK_SECONDS", 600)))
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--call-timeout", type=float, default=120)
    args = p.parse_intermixed_args()
    os.makedirs(args.out, exist_ok=True)
    port = args.port or free_port()
    server = f"127.0.0.1:{port}"
    log_path = os.path.join(args.out, "soak-server.log")
    with open(log_path, "w") as log:
        daemon = subprocess.Popen([f"{args.build}/rgpu-server", "--backend", args.backend, "--port", str(port),
                                   "--workers", "4", "--max-sessions", str(max(256, 2 * args.sessions)),
                                   "--max-sessions-per-client", "0", "--module-cache",
                                   os.path.join(args.out, "soak-module-cache")], stderr=log)
    try:
        if not wait_listening(port):
            print("soak: the server did not start", file=sys.stderr)
            return 1
        time.sleep(1)  # its pre-started workers are ready
        before, smi_before = free_memory(args.build, server), nvidia_smi_used()
        totals = Totals()
        start = time.time()
        deadline = start + args.seconds
        slots = [threading.Thread(target=run_slot, args=(i, args, server, deadline, totals))
                 for i in range(args.sessions)]
        for t in slots:
            t.start()
        for t in slots:
            t.join()
        elapsed = time.time() - start
        daemon_alive = daemon.poll() is None
        # Every session over, its worker gone: the memory must come back.
        after = None
        for _ in range(30):
            after = free_memory(args.build, server) if daemon_alive else None
            if after and before and after["free"] >= before["free"]:
                break
            time.sleep(1)
        smi_after = nvidia_smi_used()
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
    log = open(log_path).read()
    worker_crashes = len(re.findall(r"worker \d+ (killed by signal|exited with status)", log))
    memory_back = bool(before and after and after["free"] >= before["free"])
    n = totals.n
    waits = sorted(totals.open_s)
    open_median, open_max = (waits[len(waits) // 2], waits[-1]) if waits else (None, None)
    report = dict(backend=args.backend, sessions=args.sessions, seconds=round(elapsed, 1), **n,
                  daemon_alive=daemon_alive, daemon_exit=daemon.returncode, worker_crashes=worker_crashes,
                  free_before=before and before["free"], free_after=after and after["free"],
                  total=before and before["total"], nvidia_smi_used_mib_before=smi_before,
                  nvidia_smi_used_mib_after=smi_after, memory_back=memory_back,
                  session_open_s_median=open_median, session_open_s_max=open_max, failures=totals.failures)
    ok = (daemon_alive and worker_crashes == 0 and n["wrong"] == 0 and n["hung"] == 0 and n["program_failures"] == 0
          and n["soak_failures"] == 0 and memory_back)
    report["pass"] = ok
    with open(os.path.join(args.out, "soak.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "soak.md"), "w") as f:
        f.write(f"{args.sessions} sessions at once for {elapsed:.0f} s on {args.backend}: "
                f"{n['calls']} soak calls ({n['errors']} errors returned, each the one expected; "
                f"{n['malformed']} malformed frames dropped), {n['program_runs']} program runs "
                f"({n['program_failures']} failed), {n['clients_killed']} clients killed; wrong results "
                f"{n['wrong']}; clients hung {n['hung']}; session open wait median {open_median} s, max {open_max} s; "
                f"daemon {'alive' if daemon_alive else 'DEAD'}, worker crashes {worker_crashes}; "
                f"GPU 0 free before {report['free_before']} B, after {report['free_after']} B"
                + (f" (nvidia-smi used {smi_before} MiB before, {smi_after} MiB after)" if smi_before is not None else "")
                + f"; {'PASS' if ok else 'FAIL'}\n")
        for what in totals.failures[:20]:
            f.write(f"- {what}\n")
    print(open(os.path.join(args.out, "soak.md")).read(), end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
