"""Emitter figures: the cost of writing one event, against a bare `json.dumps` writer.

Every round times each contender once, in a rotating order, on a fresh file; the figures
are medians over rounds. The baseline writes the very dicts our emitter wrote (read back
from its file), so it does none of the stamping work (seq, ts, derived fields) ours does.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from context import Context
from emitter_floor import time_floor
from records import Figure, Measurement, Target, median, round_ratios

__all__ = ["FIGURES"]

_STREAM = "progress.jsonl"


def _losses(count: int) -> list[tuple[float, float]]:
    return [(2.5 / (1 + step / 300), 5e-5 * (1 - step / count)) for step in range(1, count + 1)]


def _discard(*_: Any) -> None:
    """The second sink: a callback that does nothing, so only the emitter's fan-out is timed."""


def _time_ours(
    directory: Path,
    values: list[tuple[float, float]],
    callbacks: tuple[Callable[..., Any], ...],
    journal: bool = True,
    sinks: tuple[Any, ...] = (),
) -> float:
    from trainwire.writer.run import Run

    run = Run(
        directory, step_interval_s=0, heartbeat_interval_s=None, callbacks=callbacks, journal=journal, sinks=sinks
    )
    run.start(total_steps=len(values))
    gc.collect()
    started = time.perf_counter()
    for step, (loss, learning_rate) in enumerate(values, start=1):
        run.step(step, loss=loss, learning_rate=learning_rate)
    elapsed = time.perf_counter() - started
    run.finish()
    return elapsed / len(values)


def _time_whole_life(directory: Path, values: list[tuple[float, float]]) -> float:
    """A run's whole life with the journal (the default): built, started, stepped, finished;
    the journal's thread folds on the same interpreter, so its work is in the wall time."""
    from trainwire.writer.run import Run

    gc.collect()
    started = time.perf_counter()
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=len(values))
    for step, (loss, learning_rate) in enumerate(values, start=1):
        run.step(step, loss=loss, learning_rate=learning_rate)
    run.finish()
    return (time.perf_counter() - started) / len(values)


def _time_json_dumps(directory: Path, lines: list[dict[str, Any]]) -> float:
    gc.collect()
    started = time.perf_counter()
    with open(directory / _STREAM, "a", encoding="utf-8") as stream:
        for line in lines:
            stream.write(json.dumps(line, ensure_ascii=False) + "\n")
            stream.flush()
    return (time.perf_counter() - started) / len(lines)


def _time_llama_factory(directory: Path, lines: list[dict[str, Any]]) -> float:
    """LLaMA-Factory's LogCallback: open, append, close for every line."""
    path = directory / _STREAM
    gc.collect()
    started = time.perf_counter()
    for line in lines:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(line) + "\n")
    return (time.perf_counter() - started) / len(lines)


def _kubeflow_reporter(directory: Path) -> Any:
    """The TrainJob reporter a run inside Kubeflow adds, posting (on its own thread) to a port
    where nothing listens: the training thread's share is what is timed."""
    import logging

    from trainwire.writer.kubeflow.environment import StatusEndpoint
    from trainwire.writer.kubeflow.reporter import KubeflowReporter

    logging.getLogger("trainwire.writer.kubeflow").setLevel(logging.ERROR)
    endpoint = StatusEndpoint("https://127.0.0.1:9/status", str(directory / "ca.crt"), str(directory / "token"))
    return KubeflowReporter(endpoint, interval_s=5.0, finish_wait_s=0.1, environ={})


def _step_lines(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as stream:
        lines = [json.loads(text) for text in stream]
    return [line for line in lines if line.get("event") == "train.step"]


@dataclass(frozen=True)
class EmitterTimes:
    """Seconds per event, one entry per round."""

    ours: list[float]
    ours_without_journal: list[float]
    ours_with_callback: list[float]
    ours_with_kubeflow: list[float]
    json_dumps: list[float]
    llama_factory: list[float]
    floor: list[float]


def _measure(ctx: Context) -> EmitterTimes:
    values = _losses(ctx.scale.emitter_events)
    warm_up = ctx.scratch_dir("emitter-warm-up")
    _time_ours(warm_up, values, ())
    lines = _step_lines(warm_up / _STREAM)
    if len(lines) != len(values):
        raise RuntimeError(f"the emitter wrote {len(lines)} train.step lines for {len(values)} steps (throttled?)")
    contenders: dict[str, Callable[[Path], float]] = {
        "ours": lambda directory: _time_ours(directory, values, ()),
        "ours_without_journal": lambda directory: _time_ours(directory, values, (), journal=False),
        "ours_with_callback": lambda directory: _time_ours(directory, values, (_discard,)),
        "ours_with_kubeflow": lambda directory: _time_ours(
            directory, values, (), sinks=(_kubeflow_reporter(directory),)
        ),
        "json_dumps": lambda directory: _time_json_dumps(directory, lines),
        "llama_factory": lambda directory: _time_llama_factory(directory, lines),
        "floor": lambda directory: time_floor(directory / _STREAM, values),
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for round_ in range(ctx.scale.emitter_rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(contenders[name](ctx.scratch_dir(f"emitter-{name}")))
    return EmitterTimes(**times)


def _times(ctx: Context) -> EmitterTimes:
    return ctx.once("emitter", lambda: _measure(ctx))


#: steps of the whole-life figure (fewer at the smoke test's scale)
_LIFE_STEPS = 20_000


def _whole_life(ctx: Context) -> Measurement:
    """Its own rounds, the run and the baseline alternating, so it can be measured alone."""
    values = _losses(min(_LIFE_STEPS, ctx.scale.emitter_events))
    warm_up = ctx.scratch_dir("emitter-life-warm-up")
    _time_whole_life(warm_up, values)
    lines = _step_lines(warm_up / _STREAM)
    ours: list[float] = []
    baseline: list[float] = []
    for round_ in range(ctx.scale.emitter_rounds):
        pair = [(ours, lambda d: _time_whole_life(d, values)), (baseline, lambda d: _time_json_dumps(d, lines))]
        for times, time_it in pair if round_ % 2 == 0 else pair[::-1]:
            times.append(time_it(ctx.scratch_dir("emitter-life")))
    notes = f"{len(values)} steps: Run(), start, steps, finish, journal on x {len(ours)} rounds; per step"
    return _per_event(ours, baseline, notes)


_MICRO = 1e6


def _per_event(value: list[float], baseline: list[float], notes: str) -> Measurement:
    """Microseconds per event of `value` against `baseline`, timed in the same rounds."""
    return Measurement(
        median(value) * _MICRO, median(baseline) * _MICRO, rounds=round_ratios(value, baseline), notes=notes
    )


def _file_sink(ctx: Context) -> Measurement:
    times = _times(ctx)
    notes = f"{ctx.scale.emitter_events} train.step events x {len(times.ours)} rounds"
    return _per_event(times.ours, times.json_dumps, notes)


def _second_sink(ctx: Context) -> Measurement:
    times = _times(ctx)
    return _per_event(times.ours_with_callback, times.json_dumps, "file sink + a no-op callback sink")


def _journal_cost(ctx: Context) -> Measurement:
    times = _times(ctx)
    notes = "value: the file sink with the journal (the default); baseline: Run(journal=False); same rounds"
    return _per_event(times.ours, times.ours_without_journal, notes)


def _kubeflow_cost(ctx: Context) -> Measurement:
    times = _times(ctx)
    notes = "value: the file sink and a Kubeflow TrainJob reporter; baseline: the file sink alone; same rounds"
    return _per_event(times.ours_with_kubeflow, times.ours, notes)


def _llama_factory(ctx: Context) -> Measurement:
    times = _times(ctx)
    notes = "value: open/append/close per line; baseline: our emitter; ratio = how many times slower"
    return _per_event(times.llama_factory, times.ours, notes)


def _floor(ctx: Context) -> Measurement:
    times = _times(ctx)
    notes = "one function: lock, step arithmetic, line dict, ts, to_json, os.write, batch append; no checks, no sinks"
    return _per_event(times.floor, times.json_dumps, notes)


FIGURES = [
    Figure(
        "emitter, file sink", "us/event", Target("<= 0.5x json.dumps+write+flush", "ratio_at_most", 0.5), _file_sink
    ),
    Figure(
        "emitter, file + callback sinks",
        "us/event",
        Target("<= 1.3x json.dumps+write+flush", "ratio_at_most", 1.3),
        _second_sink,
    ),
    Figure(
        "emitter, the journal's cost on the training thread",
        "us/event",
        Target("<= 1.1x the file sink without the journal", "ratio_at_most", 1.1),
        _journal_cost,
    ),
    Figure(
        "emitter, whole life of 20,000 steps with the journal",
        "us/step",
        Target("<= 1.0x json.dumps+write+flush", "ratio_at_most", 1.0),
        _whole_life,
    ),
    Figure(
        "emitter, the Kubeflow reporter's cost on the training thread",
        "us/event",
        Target("<= 1.1x the file sink without it", "ratio_at_most", 1.1),
        _kubeflow_cost,
    ),
    Figure(
        "emitter floor: one function, no checks or sinks",
        "us/event",
        Target("report (bounds the file sink figure)"),
        _floor,
    ),
    Figure("LLaMA-Factory-style writer vs ours", "us/event", Target("report (expected several x)"), _llama_factory),
]
