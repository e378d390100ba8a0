#!/usr/bin/env python3
"""Soak: SESSIONS long sessions at once for SECONDS against a server of its own.

Each of SESSIONS slots keeps a soak session open (rgpu-soak-client: random
valid calls whose results are checked, invalid calls each expecting its
error) for a random stretch of LIFE_MIN..LIFE_MAX seconds, then opens the
next and ends the last (normally, or a quarter of them killed midway through
their calls), so SESSIONS soak sessions are open at once all along. Beside
them PROGRAM_LANES lanes run short sessions one after another: a valid
program through `rgpu run` (it must exit 0 and print "RESULT PASS"; a fifth
of them killed partway) or a session that sends a malformed frame, which the
server must drop.

Every session needs a worker start (CUDA initialisation and a context on the
GPU), which the server does at a limited rate. The soak paces itself so that
it never asks for more: at most OPENERS soak sessions wait for the server at
once (a slot opens its next session only when its turn comes), the program
lanes at most PROGRAM_LANES more. So a session that is not open within the
client's timeout (60 s) is the server's failure, not the soak's overload.

The report gives calls made, errors returned, wrong results, clients that
hung, soak sessions open at once, sessions started and their rate, how long
sessions waited to open (median, most), how long the daemon's workers took
to start (its log, kept as OUT_DIR/soak-server.log.gz: the most per second
over 30 s, each from fork to ready), the daemon's and workers' crashes and GPU
0's memory. On a GPU machine the memory must come back: NVML's used bytes once
the daemon has stopped and only the processes that were on the GPU before it
started are left, against the same before it started (gpu_memory.py says why
not a reading while the daemon runs; its readings through a session, before
and after, are reported beside). On the host-test backend the free memory
its sessions report must come back.

usage: soak.py BUILD_DIR OUT_DIR --backend cuda|host-test [--sessions N]
               [--seconds D] [--port P] [options: --help] PROGRAM...
Exit status 0 when SESSIONS soak sessions were open at once, nothing
crashed, no result was wrong, no client hung or failed, and the memory came
back.
"""
import argparse
import gzip
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import gpu_memory


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


WORKER_READY = re.compile(r"worker \d+ ready after ([0-9.]+) s")


class WorkerStarts:
    """Seconds each worker took from fork to ready, from the daemon's log,
    read as it grows (invalid calls make it long)."""

    def __init__(self, log_path):
        self.log = open(log_path)
        self.partial = ""
        self.seconds = []

    def read(self):
        lines = (self.partial + self.log.read()).split("\n")
        self.partial = lines.pop()
        self.seconds += [float(m.group(1)) for m in map(WORKER_READY.search, lines) if m]
        return self.seconds


def free_memory(build, server, starts):
    """GPU 0's free and total bytes, through a session of its own, read once
    the worker start that session set off is over: the daemon's idle workers
    are then as many as before, each with its context made, whenever it is
    read (else the reading catches a replacement's context half made)."""
    ready = len(starts.read())
    client = subprocess.Popen([f"{build}/rgpu-soak-client", server, "--memory"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        if client.stdout.readline().strip() == "open":
            wait_for(lambda: len(starts.read()) > ready, 60)
        out, _ = client.communicate("\n", timeout=90)
    except subprocess.TimeoutExpired:
        client.kill()
        return None
    return json.loads(out) if client.returncode == 0 else None


def children(pid):
    """The processes `pid` started that are still there (the daemon's workers)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return len(f.read().split())
    except OSError:
        return None


def median_and_most(values):
    return (round(statistics.median(values), 3), round(max(values), 3)) if values else (None, None)


class Totals:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = dict(calls=0, errors=0, wrong=0, malformed=0, soak_sessions=0, soak_failures=0, program_runs=0,
                      program_failures=0, clients_killed=0, hung=0, sessions_started=0)
        self.failures = []
        self.open_s = []  # each soak and malformed session's wait to open
        self.open_now = 0  # soak sessions open now
        self.broken = False  # a soak thread failed: the run counts for nothing

    def add(self, **kw):
        with self.lock:
            for k, v in kw.items():
                self.n[k] += v

    def fail(self, what):
        with self.lock:
            self.failures.append(what)

    def counts(self, out):
        """Adds a soak client's JSON line of counts and returns them; None when there is none."""
        lines = [line for line in out.splitlines() if line.startswith("{")]
        if not lines:
            return None
        c = json.loads(lines[-1])
        with self.lock:
            for k in ("calls", "errors", "wrong", "malformed"):
                self.n[k] += c[k]
        return c


def guarded(target, totals):
    """target, but an exception in it fails the soak instead of passing unseen."""
    def run(*args):
        try:
            target(*args)
        except Exception:
            totals.fail(f"soak.py: {traceback.format_exc()}")
            with totals.lock:
                totals.broken = True
    return run


class Client:
    """A client process; its stderr goes to a file so it can never block on it."""

    def __init__(self, cmd, env, stdin=None):
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=self.err, text=True, env=env)

    def finish(self, timeout):
        """(stdout, stderr), or None when it did not end within timeout (it is killed)."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        return out, self.stderr()

    def kill(self):
        self.proc.kill()
        self.proc.communicate()

    def stderr(self):
        self.err.seek(0)
        return self.err.read()[-400:]


def open_soak_session(rng, args, server, openers, totals):
    """A soak client whose session is open, or None (the failure recorded)."""
    env = dict(os.environ, RGPU_LOG_LEVEL="error")
    cmd = [f"{args.build}/rgpu-soak-client", server, str(rng.getrandbits(31)), str(args.pause_ms)]
    with openers:
        client = Client(cmd, env, stdin=subprocess.PIPE)
        opened = client.proc.stdout.readline()
    totals.add(sessions_started=1)
    if not opened.startswith("open "):
        done = client.finish(args.call_timeout)
        totals.add(soak_failures=1)
        totals.fail(f"soak client exited {client.proc.returncode} before its session opened: "
                    f"{done[1] if done else client.stderr()}")
        return None
    with totals.lock:
        totals.open_s.append(float(opened.split()[1]))
        totals.open_now += 1
    return client


def end_soak_session(client, killed, args, totals):
    if killed:
        client.kill()
        totals.add(clients_killed=1)
    else:
        done = client.finish(args.call_timeout)  # closes its standard input: the client ends
        if done is None:
            totals.add(hung=1)
            totals.fail(f"soak client hung past {args.call_timeout} s after it was told to end: {client.stderr()}")
        else:
            totals.add(soak_sessions=1)
            if not totals.counts(done[0]) or client.proc.returncode != 0:
                totals.add(soak_failures=1)
                totals.fail(f"soak client exited {client.proc.returncode}: {done[1]}")
    with totals.lock:
        totals.open_now -= 1


def soak_slot(slot, args, server, deadline, openers, totals):
    """Keeps a soak session open until the deadline, each for a random stretch:
    the next one opens before the last one ends (normally or killed), so the
    slot's session is never missing while it waits for the server."""
    rng = random.Random(args.seed * 1000 + slot)
    current = None
    while time.time() < deadline:
        following = open_soak_session(rng, args, server, openers, totals)
        if current:
            end_soak_session(current, rng.random() < 0.25, args, totals)
        current = following or current
        time.sleep(max(0, min(rng.uniform(args.life_min, args.life_max), deadline - time.time())))
    if current:
        end_soak_session(current, False, args, totals)


def program_lane(lane, args, server, deadline, totals):
    """Short sessions one after another: programs (some killed) and malformed frames."""
    rng = random.Random(args.seed * 1000 + 500 + lane)
    env = dict(os.environ, RGPU_LOG_LEVEL="error")
    while time.time() < deadline:
        totals.add(sessions_started=1)
        if rng.random() < 0.2 or not args.programs:
            client = Client([f"{args.build}/rgpu-soak-client", server, "--malformed", str(rng.getrandbits(31))], env)
            done = client.finish(args.call_timeout)
            if done is None:
                totals.add(hung=1)
                totals.fail(f"malformed-frame session hung past {args.call_timeout} s: {client.stderr()}")
                continue
            counts = totals.counts(done[0])
            if counts:
                with totals.lock:
                    totals.open_s.append(counts["open_s"])
            if not counts or client.proc.returncode != 0:
                totals.add(soak_failures=1)
                totals.fail(f"malformed-frame session exited {client.proc.returncode}: {done[1]}")
            continue
        program = rng.choice(args.programs)
        client = Client([f"{args.build}/rgpu", "run", "--server", server, "--", program], env)
        if rng.random() < 0.2:
            time.sleep(rng.uniform(0.05, 1))
            client.kill()
            totals.add(clients_killed=1)
            continue
        done = client.finish(args.call_timeout)
        if done is None:
            totals.add(hung=1)
            totals.fail(f"{program} hung past {args.call_timeout} s: {client.stderr()}")
            continue
        ok = client.proc.returncode == 0 and "RESULT PASS" in done[0]
        totals.add(program_runs=1, program_failures=0 if ok else 1)
        if not ok:
            totals.fail(f"{program} exited {client.proc.returncode}: {(done[0] + done[1])[-400:]}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("programs", nargs="*")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--sessions", type=int, default=int(os.environ.get("RGPU_SOAK_SESSIONS", 64)))
    p.add_argument("--seconds", type=float, default=float(os.environ.get("RGPU_SOAK_SECONDS", 600)))
    p.add_argument("--life-min", type=float, help="shortest soak session, s (default: SECONDS / 10)")
    p.add_argument("--life-max", type=float, help="longest soak session, s (default: SECONDS / 2)")
    p.add_argument("--openers", type=int, default=4, help="soak sessions waiting to open at once, at most")
    p.add_argument("--program-lanes", type=int, default=4)
    p.add_argument("--pause-ms", type=int, default=5, help="mean pause between a soak client's steps")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--call-timeout", type=float, default=120)
    args = p.parse_intermixed_args()
    args.life_min = args.life_min or args.seconds / 10
    args.life_max = max(args.life_max or args.seconds / 2, args.life_min)
    os.makedirs(args.out, exist_ok=True)
    port = args.port or free_port()
    server = f"127.0.0.1:{port}"
    log_path = os.path.join(args.out, "soak-server.log")
    prestarted = 4
    gpu_before = gpu_memory.reading()
    gpu_after = None
    with open(log_path, "w") as log:
        daemon = subprocess.Popen([f"{args.build}/rgpu-server", "--backend", args.backend, "--port", str(port),
                                   "--workers", str(prestarted), "--max-sessions", str(max(256, 2 * args.sessions)),
                                   "--max-sessions-per-client", "0", "--module-cache",
                                   os.path.join(args.out, "soak-module-cache")], stderr=log)
    starts = WorkerStarts(log_path)
    try:
        if not wait_for(lambda: listening(port), 20) or not wait_for(
                lambda: len(starts.read()) >= prestarted, 120):
            print("soak: the server did not start", file=sys.stderr)
            return 1
        before = free_memory(args.build, server, starts)
        totals = Totals()
        openers = threading.BoundedSemaphore(args.openers)
        start = time.time()
        deadline = start + args.seconds
        threads = [threading.Thread(target=guarded(soak_slot, totals), args=(i, args, server, deadline, openers, totals))
                   for i in range(args.sessions)]
        threads += [threading.Thread(target=guarded(program_lane, totals), args=(i, args, server, deadline, totals))
                    for i in range(args.program_lanes)]
        for t in threads:
            t.start()
        at_once = []  # soak sessions open, each second
        started = []  # workers started so far, each second
        while any(t.is_alive() for t in threads):
            time.sleep(1)
            if time.time() < deadline:
                at_once.append(totals.open_now)
                started.append(len(starts.read()))
        for t in threads:
            t.join()
        elapsed = time.time() - start
        daemon_alive = daemon.poll() is None
        # Every session over, its worker gone (the daemon keeps its idle
        # ones): the memory must come back.
        wait_for(lambda: children(daemon.pid) == prestarted, 30)
        workers_after = children(daemon.pid)
        after = None
        # Where the reading decides (host-test), a moment for the last frees.
        for _ in range(1 if gpu_before else 30):
            after = free_memory(args.build, server, starts) if daemon_alive else None
            if after and before and after["free"] >= before["free"]:
                break
            time.sleep(1)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
    if gpu_before:
        # The daemon's workers exit after it, and the driver frees a process's
        # memory as it goes.
        wait_for(lambda: gpu_memory.processes() == gpu_before["processes"], 30)
        gpu_after = gpu_memory.reading()
    with open(log_path) as f:
        log = f.read()
    worker_crashes = len(re.findall(r"worker \d+ (killed by signal|exited with status)", log))
    # Every invalid call is a line of it: hundreds of MB in a long soak.
    with open(log_path, "rb") as f, gzip.open(log_path + ".gz", "wb") as z:
        shutil.copyfileobj(f, z)
    os.remove(log_path)
    if gpu_before:
        memory_back = bool(gpu_after and gpu_after["processes"] == gpu_before["processes"]
                           and gpu_after["used"] <= gpu_before["used"])
    else:
        memory_back = bool(before and after and after["free"] >= before["free"])
    n = totals.n
    open_median, open_max = median_and_most(totals.open_s)
    starts = starts.read()
    start_median, start_max = median_and_most(starts)
    # The server's start rate where the soak kept it busiest: its capacity
    # for new sessions when the soak offered at least that many.
    window = min(30, len(started) - 1)
    start_rate = max((started[i + window] - started[i]) / window for i in range(len(started) - window)) \
        if window > 0 else None
    # Once every slot had its first session open (the ramp, paced by the
    # server's worker starts, is over).
    full = next((i for i, k in enumerate(at_once) if k >= args.sessions), len(at_once))
    steady = at_once[full:]
    report = dict(backend=args.backend, sessions=args.sessions, seconds=round(elapsed, 1), **n,
                  sessions_per_s=round(n["sessions_started"] / elapsed, 2),
                  soak_sessions_at_once_median=statistics.median(steady) if steady else None,
                  soak_sessions_at_once_least=min(steady) if steady else None,
                  soak_sessions_at_once_most=max(at_once) if at_once else None,
                  ramp_s=full if steady else None,
                  session_open_s_median=open_median, session_open_s_max=open_max, worker_starts=len(starts),
                  worker_start_s_least=starts and min(starts), worker_start_s_median=start_median,
                  worker_start_s_max=start_max,
                  worker_starts_per_s_most=start_rate and round(start_rate, 2),
                  daemon_alive=daemon_alive, daemon_exit=daemon.returncode, worker_crashes=worker_crashes,
                  free_before=before and before["free"], free_after=after and after["free"],
                  total=before and before["total"],
                  gpu_used_before_daemon=gpu_before and gpu_before["used"],
                  gpu_used_after_daemon=gpu_after and gpu_after["used"],
                  gpu_processes_before_daemon=gpu_before and gpu_before["processes"],
                  gpu_processes_after_daemon=gpu_after and gpu_after["processes"], memory_back=memory_back, workers_after=workers_after,
                  idle_workers=prestarted, failures=totals.failures)
    if not steady:
        totals.fail(f"never {args.sessions} soak sessions open at once (most {report['soak_sessions_at_once_most']})")
    ok = (not totals.broken and bool(steady) and daemon_alive and worker_crashes == 0 and n["wrong"] == 0
          and n["hung"] == 0 and n["program_failures"] == 0 and n["soak_failures"] == 0 and memory_back
          and workers_after == prestarted)
    report["pass"] = ok
    with open(os.path.join(args.out, "soak.json"), "w") as f:
        json.dump(report, f, indent=1)
    r = report
    with open(os.path.join(args.out, "soak.md"), "w") as f:
        f.write(f"{args.sessions} soak sessions at once (each {args.life_min:.0f}-{args.life_max:.0f} s) and "
                f"{args.program_lanes} lanes of short sessions for {elapsed:.0f} s on {args.backend}: "
                f"{n['calls']} soak calls by the sessions that ended normally ({n['errors']} errors returned, each "
                f"the one expected; "
                f"{n['malformed']} malformed frames dropped), {n['program_runs']} program runs "
                f"({n['program_failures']} failed), {n['clients_killed']} clients killed; wrong results "
                f"{n['wrong']}; clients hung {n['hung']}; soak clients failed {n['soak_failures']}; "
                f"daemon {'alive' if daemon_alive else 'DEAD'}, worker crashes {worker_crashes}; "
                + (f"GPU 0 used {r['gpu_used_before_daemon']} B before the daemon started, "
                   f"{r['gpu_used_after_daemon']} B once it had stopped (NVML; the same "
                   f"{len(gpu_before['processes'])} other processes on the GPU: "
                   f"{'yes' if gpu_after and gpu_after['processes'] == gpu_before['processes'] else 'NO'}); "
                   f"read through a session while the daemon ran: free {r['free_before']} B before, "
                   f"{r['free_after']} B after" if gpu_before else
                   f"free memory through a session before {r['free_before']} B, after {r['free_after']} B")
                + f"; worker processes left {workers_after} (the daemon's {prestarted} idle ones expected)"
                + f"; {'PASS' if ok else 'FAIL'}\n"
                f"- soak sessions open at once, sampled each second once all {args.sessions} were (after "
                f"{r['ramp_s']} s): median "
                f"{r['soak_sessions_at_once_median']}, least {r['soak_sessions_at_once_least']}, most "
                f"{r['soak_sessions_at_once_most']}\n"
                f"- sessions started {n['sessions_started']} ({r['sessions_per_s']}/s); wait to open: median "
                f"{open_median} s, most {open_max} s\n"
                f"- worker starts {len(starts)}, most per second over {window} s: {r['worker_starts_per_s_most']}; "
                f"fork to ready: least {r['worker_start_s_least']} s (about one start's own cost), median "
                f"{start_median} s, most {start_max} s (waiting for other workers' starts included)\n")
        for what in totals.failures[:20]:
            f.write(f"- {what}\n")
    print(open(os.path.join(args.out, "soak.md")).read(), end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
