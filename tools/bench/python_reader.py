"""Python reader figures: validated throughput, every step read back, the run-state fold's memory,
re-attach by offset."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from pathlib import Path

from context import BENCH_DIR, PYTHON, Context, run_child
from reattach import TimeReattach, measure_reattach
from records import Figure, Measurement, Target, median, round_ratios
from scale import MB

__all__ = ["CHUNK_BYTES", "FIGURES"]

#: how much a reader is fed at a time (a front-end reading a file does about this)
CHUNK_BYTES = 1 << 20


def _read_and_fold_file(path: Path) -> int:
    """Events validated and folded by a `StreamReader`, fed the file in chunks (no models asked for)."""
    from trainwire.reader.state import StreamReader

    reader = StreamReader()
    events = 0
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK_BYTES):
            events += len(reader.feed(chunk))
    return events


def _json_loads_file(path: Path) -> int:
    """The baseline: `json.loads` on every line, nothing checked."""
    events = 0
    with open(path, "rb") as stream:
        for line in stream:
            if line.strip():
                json.loads(line)
                events += 1
    return events


def _timed(read: Callable[[Path], int], path: Path, times: list[float]) -> int:
    gc.collect()
    started = time.perf_counter()
    events = read(path)
    times.append(time.perf_counter() - started)
    return events


def _interleaved(
    ours: Callable[[Path], int], baseline: Callable[[Path], int], path: Path, rounds: int
) -> tuple[list[float], list[float], int]:
    """The times of `ours` and `baseline` on `path`, alternating which goes first each round,
    and the count `ours` gave (the same every round, or an error)."""
    ours_times: list[float] = []
    baseline_times: list[float] = []
    counts = set()
    for round_ in range(rounds):
        if round_ % 2:
            _timed(baseline, path, baseline_times)
        counts.add(_timed(ours, path, ours_times))
        if round_ % 2 == 0:
            _timed(baseline, path, baseline_times)
    if len(counts) != 1:
        raise RuntimeError(f"{ours.__name__} gave different counts in different rounds: {sorted(counts)}")
    return ours_times, baseline_times, counts.pop()


def _throughput(ctx: Context) -> Measurement:
    path = ctx.stream(ctx.scale.reader_bytes)
    size = path.stat().st_size
    lines = _json_loads_file(path)  # also puts the file in the page cache for both
    _read_and_fold_file(path)  # imports the reader (its validators are built at import) before any timed round
    ours, baseline, events = _interleaved(_read_and_fold_file, _json_loads_file, path, ctx.scale.reader_rounds)
    if events != lines:
        raise RuntimeError(f"the reader gave {events} events for {lines} valid lines")
    return Measurement(
        size / MB / median(ours),
        size / MB / median(baseline),
        notes=f"{size / MB:.0f} MB stream, {CHUNK_BYTES >> 10} KiB chunks, {len(ours)} rounds",
        rounds=round_ratios(ours, baseline, throughput=True),
    )


def _fold_memory(ctx: Context) -> Measurement:
    path = ctx.stream(ctx.scale.large_bytes)
    done = run_child([PYTHON, str(BENCH_DIR / "fold_child.py"), str(path), str(CHUNK_BYTES)], timeout=600)
    report = json.loads(done.stdout)
    return Measurement(
        (report["peak_bytes"] - report["start_bytes"]) / MB,
        notes=(
            f"{report['bytes'] / MB:.0f} MB stream, {report['runs']} runs, "
            f"{report['bytes'] / MB / report['seconds']:.1f} MB/s; RSS after imports {report['start_bytes'] / MB:.0f} MB"
        ),
    )


def _reattach_once(path: Path, offset: int) -> int:
    """A fresh reader resuming at `offset`: open, seek, read what follows, fold it."""
    from trainwire.reader.state import StreamReader

    reader = StreamReader(offset=offset)
    with open(path, "rb") as stream:
        stream.seek(offset)
        while chunk := stream.read(CHUNK_BYTES):
            reader.feed(chunk)
    return reader.to_dict()["consumed_bytes"]


def _time_reattach(repeats: int) -> TimeReattach:
    def time_reattach(path: Path, offset: int) -> list[float]:
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            consumed = _reattach_once(path, offset)
            times.append(time.perf_counter() - started)
            if consumed != path.stat().st_size:
                raise RuntimeError(f"re-attached at {offset}, the reader consumed up to {consumed}")
        return times

    return time_reattach


def _reattach(ctx: Context) -> Measurement:
    return measure_reattach(ctx, _time_reattach(ctx.scale.reattach_repeats))


def _run_with_kept_steps(ctx: Context) -> Path:
    """A run's directory: a fortieth of its steps quick (the step file has all but the first),
    then the rest a throttle interval apart (each in the stream): the step file runs out early."""
    from trainwire import Run
    from trainwire.contract.clock import FakeClock

    directory = ctx.scratch_dir("kept-steps")
    clock = FakeClock()
    steps = ctx.scale.emitter_events * 4
    with Run(directory, clock=clock, heartbeat_interval_s=None) as run:
        run.start(total_steps=steps, provenance=False)
        for step in range(1, steps + 1):
            clock.advance(0.001 if step <= steps // 40 else 1.5)
            run.step(step, loss=1.0 / step, learning_rate=1e-3)
    return directory


def _every_line(path: Path) -> int:
    """Every step of the run: the stream's lines with its step file's records put back."""
    from trainwire.journal.kept_steps import every_line
    from trainwire.reader.state import StreamReader

    return sum(1 for _ in every_line(path, StreamReader()))


def _every_step(ctx: Context) -> Measurement:
    path = _run_with_kept_steps(ctx) / "progress.jsonl"
    _every_line(path)  # imports, and the page cache, before any timed round
    ours, baseline, events = _interleaved(_every_line, _read_and_fold_file, path, ctx.scale.reader_rounds)
    return Measurement(
        median(ours) * 1000,
        median(baseline) * 1000,
        notes=f"{events} lines and kept steps, {path.stat().st_size / MB:.0f} MB stream, {len(ours)} rounds",
        rounds=round_ratios(ours, baseline),
    )


FIGURES = [
    Figure(
        "Python reader + fold, validated",
        "MB/s",
        Target(">= 1.5x json.loads per line", "ratio_at_least", 1.5),
        _throughput,
    ),
    Figure(
        "Python run-state fold, peak RSS", "MB", Target("<= 100 MB above start", "value_at_most", 100), _fold_memory
    ),
    Figure(
        "Python every step read (stream + step file, the step file run out early)",
        "ms",
        Target("<= 1.5x the stream read alone", "ratio_at_most", 1.5),
        _every_step,
    ),
    Figure("Python re-attach near the end", "ms", Target("<= 2x the same on 1 MB", "ratio_at_most", 2.0), _reattach),
]
