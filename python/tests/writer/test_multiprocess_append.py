"""Two real processes appending to one progress file: no torn or interleaved line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from trainwire.contract.models import EVENT_ADAPTER

EVENTS_PER_PROCESS = 4000

WRITER = """
import sys
from trainwire.writer.run import Run

output_dir, run_id, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
# long lines (about 1.5 KB), so that a write split in two would show
metrics = {f"metric_{index:03d}": index / 7 for index in range(60)}
with Run(output_dir, run_id=run_id, step_interval_s=0, heartbeat_interval_s=None) as run:
    run.start(total_steps=count, provenance=False)
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    sys.stdin.readline()  # both processes write at the same time
    for step in range(1, count + 1):
        run.step(step, loss=1.0 / step, metrics=metrics)
"""


def test_two_processes_append_whole_lines_with_gap_free_seq(tmp_path: Path) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), run_id, str(EVENTS_PER_PROCESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for run_id in ("writer-a", "writer-b")
    ]
    try:
        for writer in writers:
            assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        for writer in writers:
            assert writer.wait(timeout=300) == 0
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()

    data = (tmp_path / "progress.jsonl").read_bytes()
    assert data.endswith(b"\n")
    seqs: dict[str, list[int]] = defaultdict(list)
    for line in data.splitlines(keepends=True):
        EVENT_ADAPTER.validate_json(line, strict=True)  # a torn or merged line fails here
        event = json.loads(line)
        seqs[event["run_id"]].append(event["seq"])
    expected = list(range(1, EVENTS_PER_PROCESS + 3))  # run.started, the steps, run.finished
    assert seqs == {"writer-a": expected, "writer-b": expected}
