"""Cancelling an opening: `open_from_snapshots(cancelled=...)` stops folding the stream past
the snapshot once `cancelled()` is true, after the chunk it is in, and goes on while it is false."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainwire.journal.opening import OpeningCancelled, open_from_snapshots
from trainwire.writer.run import Run


def _run_with_a_long_tail(directory: Path) -> Path:
    """A run whose snapshot covers its start, then 3 MiB of steps past it (several chunks)."""
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=10**9, config={}, provenance=False)
    run.step(1, loss=1.0)
    run.close()
    stream = directory / "progress.jsonl"
    step = json.loads(stream.read_text().splitlines()[-1])
    with stream.open("a") as file:
        number = 1
        while file.tell() < 3 << 20:
            number += 1
            step.update(seq=number, step=number, loss=1.0 / number, progress=number / 10**9)
            file.write(json.dumps(step, separators=(",", ":")) + "\n")
    return stream


def test_a_cancelled_opening_stops_after_the_chunk_it_is_in(tmp_path: Path) -> None:
    stream = _run_with_a_long_tail(tmp_path / "a")
    asked = []

    def cancelled() -> bool:
        asked.append(True)
        return len(asked) > 1  # the second chunk is not read

    with pytest.raises(OpeningCancelled):
        open_from_snapshots(stream, cancelled=cancelled)
    assert len(asked) == 2


def test_an_opening_never_cancelled_reads_to_the_end(tmp_path: Path) -> None:
    stream = _run_with_a_long_tail(tmp_path / "a")
    opened = open_from_snapshots(stream, cancelled=lambda: False)
    assert opened is not None and opened.offset == stream.stat().st_size
