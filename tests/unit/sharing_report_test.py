"""bench/sharing_report.py from canned tenant lines: aggregate and per-tenant
rates, worst p99, fairness, failures counted, and issue 26's targets at 8."""
import json
import sys
import tempfile
import unittest
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import sharing_report  # noqa: E402


def row(mode, n, i, steps, p99=100.0, ok=True):
    return {"mode": mode, "clients": n, "client": i, "ok": ok, "steps": steps, "seconds": 10.0,
            "mean_us": 1.0, "p50_us": 1.0, "p99_us": p99}


class SharingReport(unittest.TestCase):
    def test_summary_per_way_and_count(self):
        stats = sharing_report.summarise([row("rgpu-mps", 2, 0, 1000, 50), row("rgpu-mps", 2, 1, 500, 80),
                                          row("rgpu-mps", 2, 2, 0, ok=False)])
        s = stats[("rgpu-mps", 2)]
        self.assertAlmostEqual(s["aggregate"], 150.0)
        self.assertAlmostEqual(s["min"], 50.0)
        self.assertAlmostEqual(s["mean"], 75.0)
        self.assertEqual(s["p99_us"], 80)
        self.assertAlmostEqual(s["fairness"], 0.5)
        self.assertEqual(s["failed"], 1)
        late = sharing_report.summarise([dict(row("local", 2, 0, 100), late=True), row("local", 2, 1, 100)])
        self.assertEqual(late[("local", 2)]["late"], 1)
        self.assertIn("1 tenant(s) were ready only after the common start", sharing_report.table(late))

    def test_targets_at_eight_tenants(self):
        rows = [row("rgpu-timeslice", 8, i, 100) for i in range(8)]
        rows += [row("local-mps", 8, i, 400) for i in range(8)]
        rows += [row("rgpu-mps", 8, i, 380) for i in range(8)]
        text = sharing_report.targets(sharing_report.summarise(rows))
        self.assertIn("= 3.80 (target >= 3: met)", text)
        self.assertIn("= 0.95 (target >= 0.9: met)", text)
        slow = sharing_report.summarise(rows[:16] + [row("rgpu-mps", 8, i, 200) for i in range(8)])
        self.assertIn("NOT met", sharing_report.targets(slow))
        self.assertIn("not measured", sharing_report.targets(sharing_report.summarise(rows[:8])))
        self.assertNotIn("Over shm", text)
        shm = sharing_report.targets(sharing_report.summarise(rows + [row("rgpu-mps-shm", 8, i, 350) for i in range(8)]))
        self.assertIn("Over shm: rgpu + MPS / local MPS = 0.88 (target >= 0.9: NOT met)", shm)

    def test_report_fails_when_a_tenant_failed(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "sharing.jsonl"
            path.write_text("\n".join(json.dumps(r) for r in [row("local", 1, 0, 10, ok=False)]) + "\n")
            sys.argv = ["sharing_report.py", str(path), d]
            self.assertEqual(sharing_report.main(), 1)
            self.assertIn("| local | 1 |", (Path(d) / "sharing.md").read_text())


if __name__ == "__main__":
    unittest.main()
