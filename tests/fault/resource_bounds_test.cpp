// Trust-boundary tests (issue 22); filled in by the change that adds them.
