"""A journal per run: every step kept beside the throttled stream, 0.1 journals migrated,
notes, resume chains and config references, summary version 2; commands run as processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.cli_process import trainwire
from support.step_files import kept_records

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import (
    CONFIG_DIFF_FILE,
    CONFIG_FILE,
    NOTES_FILE,
    SERIES_FILE,
    STEPS_FILE,
    SUMMARY_FILE,
    run_journal_dir,
)
from trainwire.lines.summary import SummaryBuilder


def throttled_run(directory: Path, steps: int = 2000, **options: Any) -> str:
    """A fast run under the default 1 s throttle: a fake clock 10 ms a step, a dip at step 777."""
    clock = FakeClock()
    with Run(directory, clock=clock, heartbeat_interval_s=None, **options) as run:
        run.start(total_steps=steps, config={"lr": 0.1})
        for step in range(1, steps + 1):
            clock.advance(0.01)
            loss = 0.01 if step == 777 else 1.0 + 1.0 / step
            run.step(step, loss=loss, learning_rate=0.1, tokens_seen=step * 64)
    return run.run_id


def test_every_step_is_kept_and_the_summary_covers_steps_the_stream_left_out(tmp_path: Path) -> None:
    run_id = throttled_run(tmp_path)
    written = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    written_steps = {line["step"] for line in written if line["event"] == "train.step"}
    assert 777 not in written_steps and len(written_steps) < 100  # the throttle kept about one in 100
    journal = run_journal_dir(tmp_path, run_id)
    kept = kept_records(journal / STEPS_FILE)
    assert sorted(written_steps | {record["step"] for record in kept}) == list(range(1, 2001))
    summary = json.loads((journal / SUMMARY_FILE).read_text())
    assert summary["best"]["loss"] == {"value": 0.01, "step": 777} and summary["tokens"] == 2000 * 64
    snapshot = json.loads((journal / SERIES_FILE).read_text())
    assert snapshot["stream_offset"] == (tmp_path / "progress.jsonl").stat().st_size
    assert snapshot["steps_offset"] == (journal / STEPS_FILE).stat().st_size
    loss = snapshot["store"]["runs"][0]["series"]["loss"]
    assert loss["count"] == 2000  # every step went into the series

    live = {name: (journal / name).read_bytes() for name in (SUMMARY_FILE, SERIES_FILE)}
    for name in live:
        (journal / name).unlink()
    whole = (journal / STEPS_FILE).read_bytes()
    with (journal / STEPS_FILE).open("ab") as step_file:  # a writer killed mid-append, a long record
        step_file.write(b'{"after":1,"ts":"' + b"9" * 200_000)
    result = trainwire("journal", "rebuild", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert {name: (journal / name).read_bytes() for name in live} == live
    assert (journal / STEPS_FILE).read_bytes() == whole  # the torn line cut off: the next append starts a line


def test_a_0_1_journal_is_migrated_to_its_run_directory(tmp_path: Path) -> None:
    run_id = throttled_run(tmp_path, steps=10)
    journal = run_journal_dir(tmp_path, run_id)
    # the layout 0.1 wrote: the latest run's files beside the stream
    for name in (CONFIG_FILE, NOTES_FILE, SUMMARY_FILE):
        (journal / name).rename(tmp_path / name)
    (tmp_path / NOTES_FILE).write_text("old notes\n")
    second = throttled_run(tmp_path, steps=10)
    assert not (tmp_path / SUMMARY_FILE).exists() and not (tmp_path / CONFIG_FILE).exists()
    assert (journal / NOTES_FILE).read_text() == "old notes\n"
    assert json.loads((journal / SUMMARY_FILE).read_text())["run_id"] == run_id
    assert json.loads((run_journal_dir(tmp_path, second) / SUMMARY_FILE).read_text())["earlier_runs"] == [run_id]


def test_notes_chains_and_config_references_through_the_commands(tmp_path: Path) -> None:
    first = throttled_run(tmp_path / "exp", steps=10)
    clock = FakeClock()
    with Run(tmp_path / "exp", clock=clock, heartbeat_interval_s=None, config_reference=first) as run:
        run.start(config={"lr": 0.2, "warmup": 10}, resumed_from={"run_id": first, "checkpoint": None, "step": 10})
        run.step(11, loss=0.5)
    second = run.run_id
    recorded = json.loads((run_journal_dir(tmp_path / "exp", second) / CONFIG_DIFF_FILE).read_text())
    assert recorded["reference"]["run_id"] == first
    assert recorded["changes"] == {"lr": [0.1, 0.2], "warmup": [None, 10]}

    noted = trainwire("note", first, "lr 0.1 is too low", "--in", str(tmp_path))
    assert noted.returncode == 0, noted.stderr
    assert json.loads((run_journal_dir(tmp_path / "exp", first) / SUMMARY_FILE).read_text())["notes"] == 1

    listing = trainwire("runs", str(tmp_path))
    lines = listing.stdout.splitlines()
    assert lines[0] == str(tmp_path / "exp")
    assert lines[2].startswith(first) and lines[2].rstrip().endswith("1")  # one note
    assert lines[3].startswith(f"└ {second}")  # the resume under the run it resumes

    against = trainwire("diff", second, "--against", "--in", str(tmp_path), "--json")
    assert against.returncode == 0, against.stderr
    assert json.loads(against.stdout) == {"runs": [first, second], "config": recorded["changes"]}
    both = json.loads(trainwire("diff", first, second, "--in", str(tmp_path), "--json").stdout)
    assert [[text for _ts, text in notes] for notes in both["notes"]] == [["lr 0.1 is too low"], []]

    rebuilt = trainwire("journal", "rebuild", str(tmp_path / "exp"))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads((run_journal_dir(tmp_path / "exp", first) / SUMMARY_FILE).read_text())["notes"] == 1


def test_summary_2_folds_objective_trials_tokens_and_peak_memory() -> None:
    lines: list[dict[str, Any]] = [
        {
            "run_id": "r1",
            "event": "run.started",
            "ts": "2026-12-01T00:00:00Z",
            "objective": {"name": "eval/acc", "goal": "max"},
            "provenance": {"seed": 3, "seeds": {"torch": 3, "data_seed": 9}},
        },
        {"run_id": "r1", "event": "trial.started", "trial": 1, "attempt": 1, "params": {"lr": 0.1}},
        {"run_id": "r1", "event": "trial.started", "trial": 2, "attempt": 1, "params": {"lr": 0.3}},
        {
            "run_id": "r1",
            "event": "trial.ended",
            "trial": 2,
            "attempt": 1,
            "status": "succeeded",
            "best": {"trial": 2, "metric": "eval/acc", "value": 0.8},
        },
        {
            "run_id": "r1",
            "event": "train.step",
            "step": 1,
            "loss": 2.0,
            "tokens_seen": 100,
            "memory": {
                "cuda:0": {"allocated_bytes": 5, "reserved_bytes": 8, "peak_bytes": 7},
                "cpu": {"allocated_bytes": 3, "reserved_bytes": None, "peak_bytes": None},
            },
        },
        {
            "run_id": "r1",
            "event": "train.step",
            "step": 2,
            "loss": 1.0,
            "tokens_seen": 200,
            "memory": {"cuda:0": {"allocated_bytes": 4, "reserved_bytes": 8, "peak_bytes": 6}},
        },
        {"run_id": "r1", "event": "eval.completed", "step": 2, "split": "eval", "metrics": {"acc": 0.7}},
        {"run_id": "r1", "event": "eval.completed", "step": 3, "split": "eval", "metrics": {"acc": 0.6}},
    ]
    builder = SummaryBuilder()
    for line in lines:
        builder.add(line)
    summary = builder.summary()
    assert summary is not None
    assert summary["objective"] == {"name": "eval/acc", "goal": "max", "best": {"value": 0.7, "step": 2}}
    assert summary["trials"] == {
        "count": 2,
        "best": {"trial": 2, "metric": "eval/acc", "value": 0.8, "params": {"lr": 0.3}},
    }
    assert summary["tokens"] == 200 and summary["peak_memory"] == {"cpu": 3, "cuda:0": 7}
    assert summary["seeds"] == {"data_seed": 9, "seed": 3, "torch": 3}
    # a declared goal against the name rule: "loss" to maximise keeps the highest
    builder = SummaryBuilder()
    builder.add({"run_id": "r2", "event": "run.started", "objective": {"name": "loss", "goal": "max"}})
    builder.add_lines(
        [
            {"run_id": "r2", "event": "train.step", "step": s, "ts": "t", "loss": v}
            for s, v in ((1, 1.0), (2, 3.0), (3, 2.0))
        ]
    )
    assert builder.summary()["best"]["loss"] == {"value": 3.0, "step": 2}  # type: ignore[index]


def test_run_started_carries_the_declared_objective(tmp_path: Path) -> None:
    with Run(tmp_path, heartbeat_interval_s=None, objective=("eval/loss", "min")) as run:
        run.start()
    started = json.loads((tmp_path / "progress.jsonl").read_text().splitlines()[0])
    assert started["objective"] == {"name": "eval/loss", "goal": "min"}
    assert trainwire("validate", str(tmp_path / "progress.jsonl")).returncode == 0


def test_runs_and_diff_show_a_searchs_trial_count_and_best_params(tmp_path: Path) -> None:
    def search(directory: Path, rates: tuple[float, ...]) -> str:
        with Run(directory, clock=FakeClock(), heartbeat_interval_s=None) as run:
            run.start(total_trials=len(rates))
            for number, rate in enumerate(rates, start=1):
                with run.trial(number, {"lr": rate, "depth": 2}) as trial:
                    trial.metrics = {"loss": abs(rate - 0.01)}
                    trial.best = {"trial": 2, "metric": "loss", "value": 0.0} if number > 1 else None
        return run.run_id

    first = search(tmp_path / "a", (0.1, 0.01, 0.5))
    second = search(tmp_path / "b", (0.2, 0.02))
    listing = trainwire("runs", str(tmp_path / "a"))
    assert listing.returncode == 0, listing.stderr
    header, row = listing.stdout.splitlines()[1:3]
    assert "trials" in header.split()
    assert "3, best 2: depth=2, lr=0.01" in row  # by name: one order on every surface
    compared = json.loads(trainwire("diff", first, second, "--in", str(tmp_path), "--json").stdout)
    assert compared["metrics"]["trials"] == [3, 2]
    assert compared["metrics"]["best trial"] == [2, 2]
    assert compared["metrics"]["best trial lr"] == [0.01, 0.02]
