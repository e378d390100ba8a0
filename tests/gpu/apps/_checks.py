"""What the application checks share: each check prints its name and a
rounded value (compared between a local run and one through rgpu), and the
run ends with RESULT PASS only if every check held."""
import sys

_ok = True


def check(name, value, cond=True):
    global _ok
    _ok &= bool(cond)
    print(f"{name}: {value}{'' if cond else '  FAILED'}")


def step(name, body):
    """Runs one part; an exception fails it and the run goes on, so one
    unsupported call does not hide the state of the rest."""
    global _ok
    try:
        body()
    except Exception as e:  # noqa: BLE001 - reported, and the run fails
        _ok = False
        print(f"{name}: ERROR {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


def r(x, digits=4):
    return float(f"{float(x):.{digits}g}")


def finish():
    print("RESULT PASS" if _ok else "RESULT FAIL")
    sys.exit(0 if _ok else 1)
