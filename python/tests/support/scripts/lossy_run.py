"""A training loop whose stream may lose lines: `lossy_run.py OUTPUT_DIR STEPS [SIZE_LIMIT] [fail]`.

With SIZE_LIMIT the process may not grow a file past that many bytes (`RLIMIT_FSIZE`, with
SIGXFSZ ignored: a write crossing it is cut short and the next one fails with EFBIG, as on a
full disk) until half the steps are done; then the limit is lifted and the stream can be
written again (SIZE_LIMIT 0: no limit). With `fail` the training raises at its last step.
Exits with the run's exit code, as a script following docs/python.md does."""

from __future__ import annotations

import resource
import signal
import sys

from trainwire import Run

output_dir, steps = sys.argv[1], int(sys.argv[2])
limit = int(sys.argv[3]) if len(sys.argv) > 3 and int(sys.argv[3]) else None
fails = sys.argv[4:] == ["fail"]
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
if limit is not None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
try:
    with Run(output_dir, run_id="lossy", step_interval_s=0, heartbeat_interval_s=None) as run:
        run.start(total_steps=steps, provenance=False)
        for step in range(1, steps + 1):
            run.step(step, loss=1.0 / step)
            if limit is not None and step == steps // 2:
                resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
            if fails and step == steps:
                raise RuntimeError("the training diverged")
except RuntimeError:
    pass  # the run ended failed: its exit code says so
print(run.status, run.exit_code)
sys.exit(run.exit_code)
