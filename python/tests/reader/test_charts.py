"""The chart specification (charts/charts.json): every series lands on a chart, grouped by kind,
and the dashboard/HTML plot (TypeScript) and the PNG/SVG plot (Python) list the same charts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.typescript_side import typescript_lines

from trainwire.conformance.paths import cases_dir
from trainwire.contract import canonical
from trainwire.contract.clock import FakeClock
from trainwire.reader.charts import CHART_SPEC, MARKER_STYLES, chart_list, chart_of
from trainwire.reader.series import SeriesStore
from trainwire.reader.state import StreamReader
from trainwire.writer.run import Run

# names a run may have, from the step fields, the Trainer's logs, custom metrics and evaluations
NAMES = [
    "loss", "learning_rate", "grad_norm", "samples_per_s", "tokens_per_s", "train_runtime", "train_samples_per_second",
    "gpu_memory_gb", "max_memory_allocated", "memory/reserved", "accuracy", "perplexity", "metrics/reward", "tokens_seen",
    "eval/validation/loss", "eval/validation/accuracy", "eval/test/accuracy", "eval/validation/runtime",
    "eval/validation/samples_per_second", "eval/validation/steps_per_second", "eval/validation/peak_memory_mb", "eval/x/y/z",
    "é/ünïcode", "lossy", "mem", "memento", "trial/3/loss", "trial/12/loss", "metrics/trial/3/loss",
]  # fmt: skip


def _started(out: Path, run_id: str, **start: int) -> tuple[Run, FakeClock]:
    """A run on a fake clock writing every step, started with `start`'s totals."""
    clock = FakeClock("2026-12-01T10:00:00Z")
    run = Run(out, run_id=run_id, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(provenance=False, **start)  # type: ignore[arg-type]
    return run, clock


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run with evaluation metrics of every kind, a restart, checkpoints, a rollback, a stop and an end."""
    out = tmp_path_factory.mktemp("charts") / "run"
    run, clock = _started(out, "every-kind", total_steps=12)
    for index, step in enumerate([*range(1, 7), *range(4, 13)]):
        clock.advance(0.5)
        run.step(step, loss=2.0 / step, learning_rate=1e-3 * step)
        if index == 5:  # out of memory at step 6: back to the checkpoint of step 3
            run.restarted("oom", step=3, batch_size_from=8, batch_size_to=4)
        elif step in (6, 12):
            run.eval(
                step,
                {
                    "loss": 1.0 / step,
                    "accuracy": step / 12,
                    "runtime": 2.5,
                    "samples_per_second": 40.0,
                    "peak_memory_mb": 512.0,
                },
                split="validation",
            )
            run.eval(step, {"accuracy": step / 13}, split="test")
            run.checkpoint(step, out / f"checkpoint-{step}")
        elif step == 9:  # a divergence: back to the checkpoint of step 6, the attempt going on
            run.rolled_back(9, 6, checkpoint=out / "checkpoint-6", reason="loss diverged")
    run.stop_requested("signal", signal="SIGTERM")
    run.finish("interrupted")
    return out / "progress.jsonl"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A search of three trials, each writing its own steps from step 1."""
    out = tmp_path_factory.mktemp("charts") / "sweep"
    run, clock = _started(out, "sweep", total_trials=3)
    for trial in (1, 2, 3):
        with run.trial(trial, {"lr": 10.0**-trial}):
            for step in range(1, 5):
                clock.advance(0.5)
                run.step(step, loss=trial + 1.0 / step)
    run.finish("succeeded")
    return out / "progress.jsonl"


def _python_charts(*paths: Path) -> list[dict[str, object]]:
    runs = []
    for path in paths:
        reader = StreamReader()
        store = SeriesStore()
        store.extend(reader.feed(path.read_bytes()))
        runs += [(run_id, store.runs[run_id]) for run_id in store.runs]
    return chart_list(runs)


def test_every_name_lands_on_the_chart_of_its_kind() -> None:
    charts = {name: chart_of(name) for name in NAMES}
    assert {name: chart["title"] for name, chart in charts.items() if chart["kind"] == "training"} == {
        "loss": "loss", "learning_rate": "learning rate", "grad_norm": "grad norm", "eval/validation/loss": "loss"}  # fmt: skip
    assert {name for name, chart in charts.items() if chart["kind"] == "speed"} == {
        "samples_per_s", "tokens_per_s", "train_runtime", "train_samples_per_second", "eval/validation/runtime",
        "eval/validation/samples_per_second", "eval/validation/steps_per_second"}  # fmt: skip
    assert {name for name, chart in charts.items() if chart["kind"] == "memory"} == {
        "gpu_memory_gb", "max_memory_allocated", "memory/reserved", "eval/validation/peak_memory_mb", "mem"}  # fmt: skip
    # one chart per evaluation metric, its splits together
    assert (
        charts["eval/validation/accuracy"]
        == charts["eval/test/accuracy"]
        == {"title": "accuracy", "kind": "evaluation", "smoothing": False, "log_scale": False}
    )
    assert charts["eval/x/y/z"]["title"] == "y/z"
    # whatever no rule names is a custom metric, on a chart of its own (a step's `metrics/` value by its name)
    assert {name: chart["title"] for name, chart in charts.items() if chart["kind"] == "custom"} == {
        "accuracy": "accuracy", "perplexity": "perplexity", "metrics/reward": "reward", "tokens_seen": "tokens_seen",
        "é/ünïcode": "é/ünïcode", "lossy": "lossy", "memento": "memento", "metrics/trial/3/loss": "trial/3/loss"}  # fmt: skip
    # a sweep's losses, trial by trial, on one chart of their own
    assert charts["trial/3/loss"] == charts["trial/12/loss"] == {
        "title": "loss per trial", "kind": "trials", "smoothing": True, "log_scale": True}  # fmt: skip
    assert not charts["learning_rate"]["smoothing"] and not charts["learning_rate"]["log_scale"]


def test_the_series_store_makes_the_markers_the_specification_draws(stream: Path) -> None:
    charts = _python_charts(stream)
    markers = charts[0]["markers"]
    assert all(chart["markers"] == markers for chart in charts)  # one run: its markers on every chart
    assert (
        {marker["kind"] for marker in markers}
        == set(MARKER_STYLES)
        == {style["kind"] for style in CHART_SPEC["markers"]}
    )
    written = {json.loads(line)["event"] for line in stream.read_text("utf-8").splitlines()}
    assert {style["event"] for style in CHART_SPEC["markers"]} <= written
    assert [
        (marker["kind"], marker["step"]) for marker in markers if marker["kind"] in ("restart", "stop", "finished")
    ] == [("restart", 3), ("stop", 12), ("finished", 12)]


def test_charts_group_by_kind_in_display_order(stream: Path) -> None:
    charts = _python_charts(stream)
    assert [(chart["kind"], chart["title"]) for chart in charts] == [
        ("training", "loss"), ("training", "learning rate"), ("evaluation", "accuracy"),
        ("speed", "timings"), ("speed", "throughput"), ("memory", "memory")]  # fmt: skip
    accuracy = charts[2]
    assert [(curve["label"], curve["sparse"]) for curve in accuracy["series"]] == [
        ("validation accuracy", True),
        ("test accuracy", True),
    ]
    # the restart broke the loss line where the second attempt resumed
    (loss,) = [curve for curve in charts[0]["series"] if curve["name"] == "loss"]
    assert loss["steps"][loss["values"].index(None)] == 3


def test_a_sweep_overlays_each_trials_loss_labelled_by_its_number(sweep: Path) -> None:
    charts = _python_charts(sweep)
    assert [(chart["kind"], chart["title"]) for chart in charts] == [("trials", "loss per trial")]
    curves = charts[0]["series"]
    assert [(curve["name"], curve["label"]) for curve in curves] == [
        ("trial/1/loss", "trial 1"), ("trial/2/loss", "trial 2"), ("trial/3/loss", "trial 3")]  # fmt: skip
    assert [(curve["steps"], curve["values"]) for curve in curves] == [
        ([1, 2, 3, 4], [trial + 1.0 / step for step in range(1, 5)]) for trial in (1, 2, 3)
    ]


def test_a_sweeps_run_level_loss_which_mixes_its_trials_is_not_drawn_but_a_plain_runs_beside_it_is(
    sweep: Path, stream: Path
) -> None:
    charts = _python_charts(sweep, stream)
    losses = [
        (curve["run"], curve["name"]) for chart in charts if chart["title"] == "loss" for curve in chart["series"]
    ]
    assert losses == [("every-kind", "loss"), ("every-kind", "eval/validation/loss")]
    trials = next(chart for chart in charts if chart["kind"] == "trials")
    assert {curve["run"] for curve in trials["series"]} == {"sweep"}


def test_typescript_lists_the_same_charts_as_python(stream: Path, sweep: Path) -> None:
    cases = sorted(cases_dir().iterdir())
    streams = [
        [stream],
        [sweep],
        [sweep, stream],
        [stream, *(case / "stream.ndjson" for case in cases[:6])],
        *([case / "stream.ndjson"] for case in cases),
    ]
    request = [{"paths": [str(path) for path in paths]} for paths in streams] + [{"names": NAMES}]
    typescript = typescript_lines("chart-list.js", request)
    assert len(typescript) == len(request)
    for paths, answer in zip(streams, typescript, strict=False):
        assert canonical.dumps(_python_charts(*paths)) == answer, paths
    assert canonical.dumps([chart_of(name) for name in NAMES]) == typescript[-1]


# names the writer accepts (1 to 256 characters) with every line terminator of either regex
# engine, a control, an astral character; Python's `$` alone also matched before a final "\n"
LINE_BREAK_NAMES = [
    "metrics/a\nb", "metrics/c\rd", "metrics/e\u2028f", "metrics/g\u2029h", "metrics/i\x85j", "metrics/\x00",
    "metrics/\n", "a\nb", "loss\n", "train_runtime\n", "gpu_memory\n", "eval/validation/loss\n",
    "eval/val\nidation/accuracy", "eval/validation/acc\nuracy", "trial/3/loss\n", "trial/3\n/loss",
    "metrics/\U0001f525 reward", "metrics/" + "x" * 256, "metrics/" + "\n" * 256, "eval/" + "\u2028" * 128 + "/loss",
]  # fmt: skip


def test_a_name_with_a_line_break_is_charted_alike_in_both_languages() -> None:
    charts = [chart_of(name) for name in LINE_BREAK_NAMES]
    assert {name: chart["title"] for name, chart in zip(LINE_BREAK_NAMES, charts, strict=True)} == {
        **{name: name for name in LINE_BREAK_NAMES},
        **{name: name[len("metrics/") :] for name in LINE_BREAK_NAMES if name.startswith("metrics/")},
        "eval/validation/acc\nuracy": "acc\nuracy", "eval/val\nidation/accuracy": "accuracy",
        "eval/validation/loss\n": "loss\n", "trial/3\n/loss": "loss per trial",
        "eval/" + "\u2028" * 128 + "/loss": "loss",
    }  # fmt: skip
    assert [chart["kind"] for chart in charts if chart["title"] == "loss"] == ["training"]
    typescript = typescript_lines("chart-list.js", [{"names": LINE_BREAK_NAMES}])
    assert typescript == [canonical.dumps(charts)]


def test_a_run_whose_metric_names_hold_line_breaks_is_charted(tmp_path: Path) -> None:
    run, clock = _started(tmp_path / "run", "line-breaks", total_steps=2)
    for step in (1, 2):
        clock.advance(0.5)
        run.step(step, loss=1.0 / step, metrics={"a\nb": 1.0, "c\rd": 2.0, "e\u2028f": 3.0})
    run.finish("succeeded")
    charts = _python_charts(tmp_path / "run" / "progress.jsonl")
    assert [(chart["title"], len(chart["series"][0]["steps"])) for chart in charts] == [
        ("loss", 2), ("a\nb", 2), ("c\rd", 2), ("e\u2028f", 2)]  # fmt: skip
