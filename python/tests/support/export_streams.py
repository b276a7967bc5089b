"""Streams for the tracker bridge tests, written by the real `Run`."""

from __future__ import annotations

from pathlib import Path

from trainwire import Run
from trainwire.contract.layout import NOTES_FILE, run_journal_dir

CONFIG = {
    "optimizer": {"name": "adamw", "lr": 0.001, "betas": [0.9, 0.999]},
    "batch size (per device)": 8,
    "api_token": "hidden",
    "x" * 300: "a long name",
    "notes": "n" * 7000,
}
PROVENANCE = {
    "git_sha": "0123456789abcdef0123456789abcdef01234567",
    "git_dirty": False,
    "seed": 7,
    "python": "3.11.9",
    "packages": {"torch": "2.13.0"},
}


def start(output_dir: Path, total_steps: int = 6) -> Run:
    run = Run(output_dir, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=total_steps, config=CONFIG, provenance=PROVENANCE)
    run.phase_started("train")
    return run


def first_attempt(run: Run) -> None:
    """Steps 1-4, an eval at 2, then an OOM restart back to step 2."""
    for step in range(1, 5):
        run.step(step, loss=1.0 / step, learning_rate=0.001, epoch=step / 4, metrics={"accuracy": step / 10})
        if step == 2:
            run.eval(2, {"loss": 0.7, "accuracy": 0.5})
    run.restarted("oom", step=2, batch_size_from=8, batch_size_to=4)


def second_attempt(run: Run, until: int = 6) -> None:
    """Steps 3-`until` of the new attempt (losses 10x the first attempt's, to tell them apart),
    the first epoch ending at `until`."""
    for step in range(3, until + 1):
        run.step(step, loss=10.0 / step, learning_rate=0.0005)
    run.epoch(1, until, {"loss": 0.4})
    run.eval(until, {"loss": 0.4})


def end_interrupted(run: Run, until: int = 6) -> None:
    run.stop_requested("control_file", reason="enough")
    run.checkpoint(until, run.output_dir + f"/checkpoint-{until}")
    run.phase_ended("train", "interrupted")
    run.finish("interrupted", metrics={"loss": 1.5})


NOTES = "# Notes\n\nA smaller batch after the OOM."


def write_notes(output_dir: Path, run_id: str) -> None:
    """Notes as a person leaves them in the run's journal (the writer made the file)."""
    (run_journal_dir(output_dir, run_id) / NOTES_FILE).write_text(NOTES + "\n", encoding="utf-8")


def whole_run(output_dir: Path) -> str:
    run = start(output_dir)
    write_notes(output_dir, run.run_id)
    first_attempt(run)
    second_attempt(run)
    end_interrupted(run)
    return run.run_id


#: the name and tags of `search_run`
SEARCH_NAME = "lr sweep"
SEARCH_TAGS = ["baseline", "fp16"]
#: the params of each trial of `search_run`
TRIAL_PARAMS = {1: {"lr": 0.01, "optimizer": "sgd"}, 2: {"lr": 0.1, "optimizer": "adam"}}


def search_run(output_dir: Path) -> str:
    """A search of two trials: the first succeeds (two steps, an evaluation, objective 0.4),
    the second is pruned after one step."""
    with Run(output_dir, step_interval_s=0, heartbeat_interval_s=None, name=SEARCH_NAME, tags=SEARCH_TAGS) as run:
        run.start(total_trials=2, config={"study_name": "sweep"}, provenance=False)
        for number, params in TRIAL_PARAMS.items():
            with run.trial(number, params) as trial:
                for step in range(1, 3 if number == 1 else 2):
                    run.step(step, loss=number / step)
                if number == 1:
                    run.eval(2, {"loss": 0.4})
                    trial.metrics, trial.best = {"objective": 0.4}, {"trial": 1, "metric": "objective", "value": 0.4}
                else:
                    trial.status, trial.metrics = "pruned", {"objective": None}
    return run.run_id


def readme_run(output_dir: Path) -> str:
    """The README's example: 100 steps logged in well under the default step interval, so
    the stream holds the first and the last and the journal's step file the 98 between."""
    with Run(output_dir) as run:
        run.start(total_steps=100, config={"lr": 3e-4}, provenance=False)
        with run.phase("train"):
            for step in range(1, 101):
                run.step(step, loss=2.0 / step, learning_rate=3e-4)
    streamed = [line for line in (output_dir / "progress.jsonl").read_text().splitlines() if '"train.step"' in line]
    assert len(streamed) < 100  # the throttle left steps out: the case these tests are about
    return run.run_id


#: the losses `readme_run` logs, by step
README_LOSSES = [(step, round(2.0 / step, 6)) for step in range(1, 101)]
