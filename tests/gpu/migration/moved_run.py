# What train_moved.py and train_moved_jax.py share (run_migrate.sh): their
# command line and the training loop, which prints each step's loss exactly
# (float.hex). At step AT the loop writes its pid to READY_FILE and trains
# on; from AT + 20 on it waits (up to 60 s) for MOVED_FILE, so the move always
# falls mid-run, between steps AT and AT + 20, whatever the heartbeat's
# timing. Without READY_FILE it just trains.
#   usage: SCRIPT MODEL STEPS [AT READY_FILE MOVED_FILE]
import os
import sys
import time


def arguments():
    """The model, the steps, and AT, READY_FILE, MOVED_FILE (None without them)."""
    model, steps = sys.argv[1], int(sys.argv[2])
    at, ready, moved = (int(sys.argv[3]), sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else (None, None, None)
    return model, steps, at, ready, moved


def train(step, steps, at, ready, moved):
    """Runs step() STEPS times; step returns the loss as a Python float."""
    start = time.time()
    for i in range(steps):
        print(f"STEP {i} {step().hex()}", flush=True)
        if at is not None and i == at:
            with open(ready, "w") as f:
                f.write(str(os.getpid()))
        if at is not None and i >= at + 20 and not os.path.exists(moved):
            deadline = time.time() + 60
            while not os.path.exists(moved) and time.time() < deadline:
                time.sleep(0.01)
    print(f"END {steps} steps in {time.time() - start:.2f} s", flush=True)
