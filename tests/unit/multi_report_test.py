"""The GPU suite's multi part, off the GPU: bench/ddp_train.py's launcher
(ranks that pass, fail, hang, and the NCCL transport they report) and its
comparison (gloo standing in where NCCL failed, losses that differ), and
bench/plot_multi.py's tables (speed-up, efficiency, targets, checksums)
from canned program outputs."""
import json
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import ddp_train  # noqa: E402


def fake_rank(script):
    """A launch prefix running `script` (bash) for each rank instead of Python."""
    return ["bash", "-c", script, "rank"]


class Launch(unittest.TestCase):
    def setUp(self):
        self.logs = Path(tempfile.mkdtemp())

    def test_both_ranks_report(self):
        results, why = ddp_train.launch("ok", "nccl", [{}, {}], fake_rank(
            'echo "h:1:1 [0] NCCL INFO Channel 00/0 : 0[1b000] -> 1[1c000] via P2P/CUMEM/read" >&2;'
            'echo "{\\"rank\\": $RANK, \\"backend\\": \\"$DDP_BACKEND\\"}"'), self.logs)
        self.assertIsNone(why)
        self.assertEqual([r["rank"] for r in results], [0, 1])
        self.assertEqual(results[1]["nccl_transports"], ["P2P/CUMEM/read"])

    def test_torchrun_starts_all_ranks_with_every_gpu(self):
        envs = [dict(RGPU_DEVICES="a:1:0", RGPU_TRANSPORT="tcp", CUDA_VISIBLE_DEVICES="0"),
                dict(RGPU_DEVICES="b:2:1", RGPU_TRANSPORT="tcp", CUDA_VISIBLE_DEVICES="0")]
        results, why = ddp_train.launch_torchrun("tr", "nccl", envs, fake_rank(
            'for r in 1 0; do echo "{\\"rank\\": $r, \\"devices\\": \\"$RGPU_DEVICES\\", '
            '\\"visible\\": \\"$CUDA_VISIBLE_DEVICES\\", \\"torchrun\\": \\"$DDP_TORCHRUN\\"}"; done'), self.logs)
        self.assertIsNone(why)
        self.assertEqual([r["rank"] for r in results], [0, 1])
        self.assertEqual(results[0]["devices"], "a:1:0,b:2:1")
        self.assertEqual(results[0]["visible"], "0,1")
        self.assertEqual(results[0]["torchrun"], "1")
        local = ddp_train.merged_env([dict(CUDA_VISIBLE_DEVICES="0"), dict(CUDA_VISIBLE_DEVICES="1")])
        self.assertEqual(local, dict(CUDA_VISIBLE_DEVICES="0,1"))

    def test_torchrun_that_fails_is_named(self):
        results, why = ddp_train.launch_torchrun("trf", "nccl", [{}, {}], fake_rank(
            'echo "{\\"rank\\": 0}"; echo "RuntimeError: NCCL error: remote" >&2; exit 3'), self.logs)
        self.assertIsNone(results)
        self.assertEqual(why, "trf-nccl-torchrun exited 3: RuntimeError: NCCL error: remote")

    def test_failed_rank_ends_the_run_and_is_named(self):
        start = time.monotonic()
        results, why = ddp_train.launch("fail", "nccl", [{}, {}], fake_rank(
            'if [ $RANK = 1 ]; then echo "RuntimeError: NCCL error: unhandled cuda error" >&2; echo bye >&2; exit 3;'
            ' else sleep 60; fi'), self.logs)
        self.assertIsNone(results)
        self.assertEqual(why, "fail-nccl-rank1 exited 3: RuntimeError: NCCL error: unhandled cuda error")
        self.assertLess(time.monotonic() - start, 30)  # rank 0 was not waited for

    def test_hang_times_out(self):
        saved, ddp_train.TIMEOUT = ddp_train.TIMEOUT, 1
        try:
            results, why = ddp_train.launch("hang", "nccl", [{}, {}], fake_rank("sleep 60"), self.logs)
        finally:
            ddp_train.TIMEOUT = saved
        self.assertIsNone(results)
        self.assertEqual(why, "timed out after 1 s")


class Compare(unittest.TestCase):
    def run_compare(self, launch):
        out = Path(tempfile.mkdtemp())
        saved, ddp_train.launch = ddp_train.launch, launch
        try:
            rc = ddp_train.compare([str(out), "--rgpu", "rgpu", "--devices", "h:1:0,h:2:1"])
        finally:
            ddp_train.launch = saved
        return rc, json.loads((out / "ddp.json").read_text())

    @staticmethod
    def ranks(losses, backend):
        return [dict(rank=r, backend=backend, losses=losses, step_seconds=0.01, weights=1.5,
                     nccl_transports=[]) for r in range(2)]

    def test_gloo_stands_in_where_nccl_fails(self):
        def launch(label, backend, envs, prefix, logs):
            if label == "tcp" and backend == "nccl":
                return None, "no mapped memory"
            return self.ranks([2.0, 1.5], backend), None
        rc, runs = self.run_compare(launch)
        self.assertEqual(rc, 0)
        self.assertEqual([(r["label"], r["backend"]) for r in runs],
                         [("local", "nccl"), ("rgpu shm", "nccl"), ("rgpu tcp", "gloo")])
        self.assertEqual(runs[2]["nccl_failure"], "no mapped memory")

    def test_losses_that_differ_fail(self):
        def launch(label, backend, envs, prefix, logs):
            return self.ranks([2.0, 1.5 if label == "local" else 1.6], backend), None
        rc, runs = self.run_compare(launch)
        self.assertEqual(rc, 1)
        self.assertFalse(runs[1]["matches_local"])


class Report(unittest.TestCase):
    def write(self, out, name, run, obj, passed=True):
        (out / f"{name}-{run}.json").write_text(json.dumps(obj) + "\n")
        (out / f"{name}-{run}.txt").write_text("RESULT PASS\n" if passed else "RESULT FAIL\n")

    def report(self, two_gpu_seconds, checksum=7.5):
        out = Path(tempfile.mkdtemp())
        for run, t2 in two_gpu_seconds.items():
            self.write(out, "scaling", run, {"devices": 2, "fma": 1e13, "runs": [
                {"gpus": 1, "seconds": 2.0, "checksum": 7.5},
                {"gpus": 2, "seconds": t2, "checksum": checksum if run == "tcp" else 7.5}]})
            self.write(out, "peer", run, {"peer_access": int(run == "local"),
                                          "bw": {"0to1": {"1048576": 10.0}, "1to0": {"1048576": 9.0}}})
        (out / "ddp.md").write_text("ddp table\n")
        p = subprocess.run([sys.executable, str(BENCH / "plot_multi.py"), str(out), "2", "h:1:0,h:2:1", "0"],
                           capture_output=True, text=True)
        return p.returncode, p.stdout

    def test_scaling_and_targets(self):
        rc, md = self.report({"local": 1.0, "shm": 1.05, "tcp": 1.25})
        self.assertEqual(rc, 0, md)
        self.assertIn("| rgpu shm | 2 | 1.050 | 1.90 | 0.952 | 1.050 | 0.952 |", md)
        self.assertIn("rgpu shm: speed-up on 2 GPUs 1.90 (target >= 1.8: met); 0.952 of local's 2.00 "
                      "(target >= 0.95: met)", md)
        self.assertIn("rgpu tcp: speed-up on 2 GPUs 1.60 (target >= 1.8: NOT met)", md)
        self.assertIn("| 1048576 | 10.00 | 9.00 | 10.00 | 9.00 | 10.00 | 9.00 |", md)
        self.assertIn("Peer access: local CUDA enabled; rgpu shm not offered", md)

    def test_differing_checksums_fail(self):
        rc, md = self.report({"local": 1.0, "shm": 1.0, "tcp": 1.0}, checksum=8.5)
        self.assertEqual(rc, 1)
        self.assertIn("Checksums differ", md)


if __name__ == "__main__":
    unittest.main()
