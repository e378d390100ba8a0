"""Compares the runs of tests/gpu/run_corpus.sh and run_apps.sh: each program
run locally and through rgpu (RESULTS: name, state, local rc, rgpu rc, local
ns, rgpu ns; LOGS: NAME.local.out, NAME.rgpu.out). A program passes when its
outputs and exit codes match and, except for error cases (err_*), the local
run exits 0 and prints "RESULT PASS". Writes OUT/corpus.json and
OUT/corpus.md; exits 1 if any program failed.
With --verdict (programs not written for rgpu, which print timings: run_samples.sh)
a program matches when its exit codes and its verdict lines (those saying pass,
fail, error or waived, numbers masked) are the same; one that does not pass
locally (exit status not 0, or a verdict line saying fail or waived) is listed
and not counted.
usage: compare_runs.py [--verdict] RESULTS LOGS OUT"""
import json, re, sys
from pathlib import Path

verdict_mode = sys.argv[1] == "--verdict"
results, logs, out = (Path(a) for a in sys.argv[1 + verdict_mode:4 + verdict_mode])
VERDICT = re.compile(r"\b(pass(ed)?|fail(ed|ure|s)?|errors?|waived)\b", re.I)
LOCAL_FAILURE = re.compile(r"\b(fail(ed|ure|s)?|waived)\b", re.I)
NUMBER = re.compile(r"[-+]?\d[\d.]*(e[-+]?\d+)?", re.I)

def verdict(text):
    return "\n".join(NUMBER.sub("#", l.strip()) for l in text.splitlines() if VERDICT.search(l))

def first_diff(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<end of output>"
        y = lb[i] if i < len(lb) else "<end of output>"
        if x != y:
            return f"line {i + 1}: local={x!r} rgpu={y!r}"
    return None

rows = []
for line in results.read_text().splitlines():
    name, state, lrc, rrc, lt, rt = line.split("\t")
    error_case = name.startswith("err_")
    if state != "ran":
        rows.append(dict(name=name, built=False, error_case=error_case, local_rc=None, rgpu_rc=None,
                         match=False, passed=False, local_seconds=None, rgpu_seconds=None,
                         first_differing_line="build failed"))
        continue
    lout = (logs / f"{name}.local.out").read_text(errors="replace")
    rout = (logs / f"{name}.rgpu.out").read_text(errors="replace")
    lrc, rrc = int(lrc), int(rrc)
    diff = first_diff(verdict(lout), verdict(rout)) if verdict_mode else first_diff(lout, rout)
    if diff is None and lrc != rrc:
        diff = f"exit code: local={lrc} rgpu={rrc}"
    match = diff is None
    if verdict_mode:
        error_case = False
        local_ok = lrc == 0 and not LOCAL_FAILURE.search(verdict(lout))
        if not local_ok:
            rows.append(dict(name=name, built=True, error_case=False, local_rc=lrc, rgpu_rc=rrc,
                             match=match, passed=None, local_seconds=round(int(lt) / 1e9, 3),
                             rgpu_seconds=round(int(rt) / 1e9, 3), local_result_pass=False,
                             first_differing_line="does not pass locally: not counted"))
            continue
    else:
        local_ok = lrc == 0 and "RESULT PASS" in lout.splitlines()
    passed = match and (error_case or local_ok)
    rows.append(dict(name=name, built=True, error_case=error_case, local_rc=lrc, rgpu_rc=rrc,
                     match=match, passed=passed, local_seconds=round(int(lt) / 1e9, 3),
                     rgpu_seconds=round(int(rt) / 1e9, 3),
                     local_result_pass=local_ok, first_differing_line=diff))

(out / "corpus.json").write_text(json.dumps(rows, indent=2) + "\n")

def cell(rc, secs, ok=None):
    if rc is None:
        return "not built"
    s = f"rc={rc}, {secs:.2f} s"
    return s if ok is None else f"{'PASS' if ok else 'FAIL'} ({s})"

md = ["| program | local | rgpu | match |", "|---|---|---|---|"]
for r in rows:
    name = r["name"] + (" (error case)" if r["error_case"] else "")
    match = ("not counted: does not pass locally" if r["passed"] is None else
             "yes" if r["match"] else f"**no**: {r['first_differing_line']}".replace("|", "\\|"))
    md.append(f"| {name} | {cell(r['local_rc'], r['local_seconds'], r.get('local_result_pass'))} | "
              f"{cell(r['rgpu_rc'], r['rgpu_seconds'])} | {match} |")
passed = sum(r["passed"] is True for r in rows)
failed = sum(r["passed"] is False for r in rows)
uncounted = len(rows) - passed - failed
md += ["", f"corpus: {passed} passed, {failed} failed"
       + (f", {uncounted} not counted (do not pass locally)" if uncounted else ""), ""]
(out / "corpus.md").write_text("\n".join(md))
for r in rows:
    if r["passed"] is False:
        print(f"FAILED {r['name']}: {r['first_differing_line'] or 'local run did not pass'}")
print(f"corpus: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
