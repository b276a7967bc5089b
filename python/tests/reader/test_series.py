"""The series store: bounded history with the extremes kept, restarts as gaps, markers,
snapshots; and the same snapshot as the TypeScript store on the same streams."""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone
from pathlib import Path

from support.typescript_side import typescript_lines

from trainwire.conformance.paths import cases_dir
from trainwire.contract import canonical
from trainwire.reader.series import MAX_TRIAL_CURVES, RunSeries, SeriesStore
from trainwire.reader.state import StreamReader

CASES = sorted(cases_dir().iterdir())


def _line(seq: int, event: str, run_id: str = "r1", **fields: object) -> str:
    ts = f"2026-11-29T10:{seq // 60 % 60:02d}:{seq % 60:02d}.000000Z"
    return json.dumps({"schema_version": 1, "seq": seq, "ts": ts, "run_id": run_id, "event": event, **fields}) + "\n"


def _step(
    seq: int, step: int, loss: float | None, run_id: str = "r1", learning_rate: float | None = 0.001, **more: object
) -> str:
    return _line(
        seq, "train.step", run_id, step=step, total_steps=None, epoch=None, loss=loss,
        learning_rate=learning_rate, elapsed_s=1, eta_s=None, progress=None, **more,
    )  # fmt: skip


def _random_stream(seed: int, steps: int) -> str:
    """Two interleaved runs with restarts, evals, checkpoints, a stop and the end, noisy values, ties,
    steps of trials among them."""
    rng = random.Random(seed)
    lines = [_line(1, "run.started", "a", producer={"name": "t", "version": "1"}, total_steps=None)]
    seqs = {"a": 1, "b": 0}
    step = {"a": 0, "b": 0}
    attempt = {"a": 1, "b": 1}
    for _ in range(steps):
        run = "a" if rng.random() < 0.7 else "b"
        seqs[run] += 1
        roll = rng.random()
        if roll < 0.01 and step[run] > 5:
            attempt[run] += 1
            back = rng.randint(0, step[run])
            lines.append(
                _line(
                    seqs[run],
                    "train.restarted",
                    run,
                    reason="oom",
                    attempt=attempt[run],
                    previous_step=step[run],
                    step=back,
                )
            )
            step[run] = back
        elif roll < 0.04:
            metrics = {"accuracy": round(rng.random(), 3), "loss": rng.choice([None, rng.random()]), "é": 1.0}
            lines.append(
                _line(seqs[run], "eval.completed", run, step=step[run], epoch=None, split="validation", metrics=metrics)
            )
        elif roll < 0.06:
            lines.append(_line(seqs[run], "checkpoint.saved", run, step=step[run], path="ckpt", reason="periodic"))
        else:
            step[run] += 1
            loss = rng.choice([None, float(rng.randint(0, 20)), rng.random() * 10])  # ties and gaps
            more = {"grad_norm": rng.choice([None, rng.random()]), "metrics": {"reward": rng.random(), "ü": None}}
            # a sweep's steps: one loss series per trial, past MAX_TRIAL_CURVES trials in a long stream
            trial = rng.choice([None, 1, 2, 10, rng.randint(11, 600)])
            if trial is not None:
                more["trial"] = trial
            lines.append(_step(seqs[run], step[run], loss, run, rng.choice([None, 1e-3, 3e-4]), **more))
    seqs["a"] += 1
    lines.append(_line(seqs["a"], "stop.requested", "a", source="api", signal=None, reason=None, requested_by=None))
    return "".join(lines)


def test_a_long_run_stays_within_max_points_keeping_first_last_min_and_max() -> None:
    values = [10 / step + (step * 7919 % 13) / 100 for step in range(1, 100_001)]
    store = SeriesStore(max_points=400)
    reader = StreamReader()
    store.extend(
        reader.feed("".join(_step(index + 1, index + 1, value) for index, value in enumerate(values)).encode())
    )
    loss = store.run("r1").series["loss"]
    points = loss.points()
    assert loss.count == len(values)
    assert 200 < len(points) <= 400
    assert points[0][1:3] == (1, values[0]) and points[-1][1:3] == (len(values), values[-1])
    assert min(point[2] for point in points) == min(values)
    assert max(point[2] for point in points) == max(values)


def test_every_step_field_and_metric_is_a_series_with_the_time_of_each_point() -> None:
    text = _step(
        1, 1, 2.0, grad_norm=0.5, samples_per_s=69_500.0, tokens_per_s=None, metrics={"z": 1.0, "gpu_mem": 3.0}
    )
    text += _step(2, 2, None, grad_norm=0.25, metrics={"z": None, "reward": 7.0})
    text += _line(3, "eval.completed", step=2, epoch=None, split="test", metrics={"accuracy": 0.5})
    text += _line(
        4, "run.finished", status="failed", exit_code=1, error={"type": "ValueError", "message": "boom"},
        reason=None, step=2, checkpoint=None, duration_s=4, metrics={}, artifacts={},
    )  # fmt: skip
    store = SeriesStore()
    store.extend(StreamReader().feed(text.encode()))
    run = store.run("r1")
    assert run is not None
    assert run.names() == [
        "loss", "learning_rate", "grad_norm", "samples_per_s", "metrics/gpu_mem", "metrics/z", "metrics/reward",
        "eval/test/accuracy",
    ]  # fmt: skip
    # the `ts` of each line, in seconds since the epoch: 2026-11-29T10:00:01Z and :02
    start = int(datetime(2026, 11, 29, 10, tzinfo=timezone.utc).timestamp())
    assert run.curve("grad_norm") == ([1, 2], [0.5, 0.25], [start + 1.0, start + 2.0])
    assert run.curve("metrics/reward") == ([2], [7.0], [start + 2.0])
    assert [(marker["kind"], marker["label"], marker["time_us"]) for marker in run.markers] == [
        ("eval", "test", (start + 3) * 1_000_000),
        ("finished", "failed", (start + 4) * 1_000_000),
    ]


def test_a_sweep_keeps_each_trials_loss_beside_the_runs_loss_alike_from_lines() -> None:
    text = _step(1, 0, 3.0, trial=2) + _step(2, 0, 5.0, trial=1) + _step(3, 1, 2.0, trial=2, metrics={"z": 1.0})
    text += _step(4, 1, None, trial=1) + _step(5, 7, 9.0) + _step(6, 1, 4.0, trial=1)
    text += _line(7, "eval.completed", step=1, epoch=None, split="test", metrics={"loss": 1.0}, trial=1)
    store = SeriesStore()
    store.extend(StreamReader().feed(text.encode()))
    run = store.run("r1")
    assert run is not None
    assert run.names() == ["loss", "learning_rate", "trial/2/loss", "trial/1/loss", "metrics/z", "eval/test/loss"]
    assert run.uplot("trial/2/loss") == ([0, 1], [3.0, 2.0])
    assert run.uplot("trial/1/loss") == ([0, 1], [5.0, 4.0])  # a step without a loss adds no point
    # the run's loss keeps every step, as the run state's does: steps going back replace the line
    assert run.uplot("loss") == ([0, 1], [5.0, 4.0])
    assert store.runs["r1"].series["loss"].count == 5
    # the writer's journal feeds the decoded lines: the same snapshot, and the same after a round trip
    from_lines = RunSeries("r1", store.max_points, store.max_markers)
    for line in text.splitlines():
        from_lines.add_line(json.loads(line))
    assert canonical.dumps(from_lines.to_dict()) == canonical.dumps(run.to_dict())
    restored = SeriesStore.from_dict(json.loads(canonical.dumps(store.to_dict())))
    assert restored.runs["r1"].names() == run.names()


def test_a_restart_breaks_the_uplot_line_and_markers_are_recorded() -> None:
    text = "".join(
        [_line(1, "run.started", producer={"name": "t", "version": "1"}, total_steps=None)]
        + [_step(index + 2, step, 5.0 - step) for index, step in enumerate([1, 2, 3, 4])]
        + [_line(6, "train.restarted", reason="oom", attempt=2, previous_step=4, step=2)]
        + [_step(index + 7, step, 1 / step) for index, step in enumerate([3, 4, 5])]
        + [_line(10, "checkpoint.saved", step=5, path="c", reason="final")]
    )
    store = SeriesStore()
    store.extend(StreamReader().feed(text.encode()))
    run = store.run("r1")
    assert run.uplot("loss") == ([1, 2, 3, 4, 5], [4.0, None, 1 / 3, 1 / 4, 1 / 5])
    assert [(m["kind"], m["step"], m["attempt"], m["label"]) for m in run.markers] == [
        ("restart", 2, 2, "oom"),
        ("checkpoint", 5, 2, "final"),
    ]


def test_a_rollback_replaces_the_abandoned_steps_without_a_break_and_is_marked() -> None:
    store = SeriesStore()
    store.extend(StreamReader().feed((cases_dir() / "rollback-to-checkpoint" / "stream.ndjson").read_bytes()))
    run = store.run("rollback")
    # steps 5 and 6 (loss 50) before the rollback to step 4 are left out; the attempt goes on
    assert run.uplot("loss") == ([1, 2, 3, 4, 5, 6, 7, 8], [1.0, 0.5, 1 / 3, 0.25, 0.2, 0.2, 0.2, 0.2])
    assert [(m["kind"], m["step"], m["attempt"], m["label"]) for m in run.markers if m["kind"] == "rollback"] == [
        ("rollback", 4, 1, "loss diverged")
    ]


def test_a_sweep_keeps_the_curves_of_its_first_trials_each_with_fewer_points() -> None:
    text = _random_stream(3, 6000).encode()
    store = SeriesStore(max_points=64)
    store.extend(StreamReader().feed(text))
    first_trials: list[str] = []
    for line in text.splitlines():
        event = json.loads(line)
        name = f"trial/{event.get('trial')}/loss"
        if event["run_id"] == "a" and event.get("loss") is not None and "trial" in event and name not in first_trials:
            first_trials.append(name)
    assert len(first_trials) > MAX_TRIAL_CURVES  # the stream has more trials than are kept
    kept = [name for name in store.runs["a"].names() if name.startswith("trial/")]
    assert kept == first_trials[:MAX_TRIAL_CURVES]
    run = store.runs["a"]
    assert {run.series[name].max_buckets for name in kept} == {1}  # 64 points / 16, 4 points a bucket
    assert run.series["loss"].max_buckets == 16


def test_a_snapshot_round_trip_goes_on_as_if_uninterrupted() -> None:
    text = _random_stream(7, 3000).encode()
    half = text.index(b"\n", len(text) // 2) + 1
    whole = SeriesStore(max_points=64)
    whole.extend(StreamReader().feed(text))
    reader = StreamReader()
    first = SeriesStore(max_points=64)
    first.extend(reader.feed(text[:half]))
    restored = SeriesStore.from_dict(json.loads(json.dumps(first.to_dict())))
    restored.extend(reader.feed(text[half:]))
    assert canonical.dumps(restored.to_dict()) == canonical.dumps(whole.to_dict())


def test_a_canonical_snapshot_keeps_the_order_of_first_value() -> None:
    # canonical JSON sorts the series names; charts come in the order of first value
    for text in [_random_stream(seed, 2000).encode() for seed in range(3)] + [
        (case / "stream.ndjson").read_bytes() for case in CASES
    ]:
        whole = SeriesStore(max_points=64)
        whole.extend(StreamReader().feed(text))
        restored = SeriesStore.from_dict(json.loads(canonical.dumps(whole.to_dict())))
        assert [run.names() for run in restored.runs.values()] == [run.names() for run in whole.runs.values()]


def test_python_and_typescript_series_stores_give_the_same_snapshot(tmp_path: Path) -> None:
    streams = [case / "stream.ndjson" for case in CASES]
    for seed in range(4):
        path = tmp_path / f"random-{seed}.ndjson"
        path.write_text(_random_stream(seed, 4000), encoding="utf-8")
        streams.append(path)
    request = [
        {"path": str(stream), "max_points": 48 + 8 * index % 40, "max_markers": 30}
        for index, stream in enumerate(streams)
    ]
    typescript = typescript_lines("series-snapshots.js", request)
    assert len(typescript) == len(streams)
    compacted = 0
    for case, ts_snapshot in zip(request, typescript, strict=False):
        store = SeriesStore(max_points=case["max_points"], max_markers=case["max_markers"])
        reader = StreamReader()
        store.extend(reader.feed(Path(case["path"]).read_bytes()))
        python = canonical.dumps(store.to_dict())
        assert python == ts_snapshot, case["path"]
        compacted += any(
            series["bucket_size"] > 1 for run in store.to_dict()["runs"] for series in run["series"].values()
        )
    assert compacted >= 4  # the random streams were downsampled: the merging itself was compared
