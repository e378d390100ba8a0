"""bench/trace_per_step.py from a canned trace: calls between a model's
markers counted per step, by op and kind, and nothing outside them."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import trace_per_step  # noqa: E402

TRACE = """\
[rgpu-client 7 info] trace FuncGetAttributes args=8B -> 0 (9.0 us)
apps_bench: steps cnn 2 begin
[rgpu-client 7 info] trace FuncGetAttributes args=8B -> 0 (8.0 us)
[rgpu-client 7 info] trace LaunchKernel [async] args=96B -> 0 (3.0 us)
[rgpu-client 7 info] trace LaunchKernel [async] args=96B -> 0 (5.0 us)
some line of the program's own
[rgpu-client 7 info] trace cuCtxGetId args=0B -> 0 (10.0 us)
[rgpu-client 7 info] trace FuncGetAttributes args=8B -> 98 (4.0 us)
apps_bench: steps cnn end
[rgpu-client 7 info] trace Memset [async] args=40B -> 0 (1.0 us)
apps_bench: steps transformer 10 begin
apps_bench: steps transformer end
ddp_train: steps ddp-rank0 1 begin
[rgpu-client 9 info] trace NcclCollective args=64B -> 0 (30.0 us) thread 9
[rgpu-client 9 info] trace EventQuery args=8B -> 600 (10.0 us) thread 12
[rgpu-client 9 info] trace LaunchKernel [async] args=96B -> 0 (3.0 us) thread 9
ddp_train: steps ddp-rank0 end
"""


class TracePerStep(unittest.TestCase):
    def test_counts_per_step_between_markers(self):
        models = trace_per_step.count(TRACE.splitlines(keepends=True))
        self.assertEqual(set(models), {"cnn", "transformer", "ddp-rank0"})
        steps, ops = models["cnn"]
        self.assertEqual(steps, 2)
        self.assertEqual({k: v[:2] for k, v in ops.items()}, {("FuncGetAttributes", False): [2, 12.0],
                                                              ("LaunchKernel", True): [2, 8.0],
                                                              ("cuCtxGetId", False): [1, 10.0]})
        self.assertEqual(dict(models["transformer"][1]), {})
        ddp = {k: (v[0], v[1], dict(v[2])) for k, v in models["ddp-rank0"][1].items()}
        self.assertEqual(ddp, {("NcclCollective", False): (1, 30.0, {"9": 1}), ("EventQuery", False): (1, 10.0, {"12": 1}),
                               ("LaunchKernel", True): (1, 3.0, {"9": 1})})
        self.assertEqual(trace_per_step.busiest_thread(models["ddp-rank0"][1]), "9")

    def test_table_per_step_sync_first(self):
        text = trace_per_step.table(trace_per_step.count(TRACE.splitlines()))
        rows = [l for l in text.splitlines() if l.startswith("| ") and "---" not in l and "| op |" not in l]
        # Traces without thread ids say nothing of threads.
        self.assertEqual(rows, ["| FuncGetAttributes | sync | 1 | - | 6 us |", "| cuCtxGetId | sync | 0.5 | - | 5 us |",
                                "| LaunchKernel | async | 1 | - | 4 us |", "| (none) | | 0 | | 0 us |",
                                "| NcclCollective | sync | 1 | 1 | 30 us |", "| EventQuery | sync | 1 | 0 | 10 us |",
                                "| LaunchKernel | async | 1 | 1 | 3 us |"])

    def test_without_markers_it_says_so(self):
        with tempfile.NamedTemporaryFile("w", suffix=".err") as f:
            f.write("[rgpu-client 7 info] trace Free args=8B -> 0 (1.0 us)\n")
            f.flush()
            r = subprocess.run([sys.executable, str(BENCH / "trace_per_step.py"), f.name], capture_output=True,
                               text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no traced steps", r.stderr)


if __name__ == "__main__":
    unittest.main()
