"""`trainwire export wandb`: offline runs read back record by record with W&B's own protocol
messages (`wandb_internal_pb2.Record`), without a server or the network."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import support.export_streams as export_streams
from support.wandb_records import of_type, records, summary

from trainwire import Run
from trainwire.cli import main
from trainwire.contract.clock import parse_timestamp_us
from trainwire.export.scalars import safe_name


def history(found: list[Any]) -> list[dict[str, Any]]:
    return [{item.nested_key[0]: json.loads(item.value_json) for item in row.item} for row in of_type(found, "history")]


def series(rows: list[dict[str, Any]], key: str) -> list[tuple[int, float]]:
    return [(row["train/step"], round(row[key], 6)) for row in rows if key in row]


def offline_runs(run_dir: Path, run_id: str) -> list[Path]:
    return sorted((run_dir / "wandb").glob(f"offline-run-*-{safe_name(run_id)}"))


def export(run_dir: Path, *more: str) -> int:
    return main(["export", "wandb", str(run_dir), *more])


def test_a_finished_run_becomes_one_offline_run(tmp_path: Path) -> None:
    run_id = export_streams.whole_run(tmp_path)
    assert export(tmp_path, "--project", "tw") == 0

    (offline,) = offline_runs(tmp_path, run_id)
    found = records(offline)
    started, *updates = of_type(found, "run")  # the run as it starts, then updates of it
    assert (started.run_id, started.project, started.display_name) == (safe_name(run_id), "tw", run_id)
    assert started.notes == updates[-1].notes == export_streams.NOTES
    config = {item.key: json.loads(item.value_json) for item in started.config.update}
    assert config["optimizer"] == {"name": "adamw", "lr": 0.001, "betas": [0.9, 0.999]}
    assert config["api_token"] == "<redacted>"
    assert config["trainwire"]["provenance"]["git_sha"] == export_streams.PROVENANCE["git_sha"]

    rows = history(found)
    # the trainwire step is the step metric: both attempts' steps 3 and 4 are kept
    assert series(rows, "train/loss") == [
        (1, 1.0),
        (2, 0.5),
        (3, 0.333333),
        (4, 0.25),
        (3, 3.333333),
        (4, 2.5),
        (5, 2.0),
        (6, 1.666667),
    ]
    assert series(rows, "eval/loss") == [(2, 0.7), (6, 0.4)]
    assert series(rows, "epoch/loss") == [(6, 0.4)]
    assert series(rows, "final/loss") == [(6, 1.5)]
    first_ts = next(json.loads(line)["ts"] for line in (tmp_path / "progress.jsonl").open() if '"train.step"' in line)
    assert rows[0]["_timestamp"] == parse_timestamp_us(first_ts) / 1_000_000
    (metric,) = [m for m in of_type(found, "metric") if m.glob_name == "*"]
    assert metric.step_metric == "train/step"

    values = summary(found)
    assert values["trainwire/status"] == "interrupted" and values["trainwire/reason"] == "control_file"
    assert values["trainwire/checkpoint"] == {"step": 6, "path": "checkpoint-6"}
    assert values["trainwire/attempt"] == 2
    saved = {file.path for files in of_type(found, "files") for file in files.files}
    assert {"trainwire/config.json", "trainwire/notes.md", "trainwire/summary.json"} <= saved
    assert (offline / "files" / "trainwire" / "notes.md").read_text().strip() == export_streams.NOTES
    (exit_record,) = of_type(found, "exit")
    assert exit_record.exit_code == 2  # the run's own: interrupted


def test_exporting_again_adds_only_what_is_new(tmp_path: Path) -> None:
    run = export_streams.start(tmp_path)
    export_streams.first_attempt(run)
    assert export(tmp_path) == 0
    assert export(tmp_path) == 0  # nothing new: no second offline run
    assert len(offline_runs(tmp_path, run.run_id)) == 1

    export_streams.second_attempt(run)
    export_streams.end_interrupted(run)
    assert export(tmp_path) == 0
    assert export(tmp_path) == 0
    first, second = offline_runs(tmp_path, run.run_id)  # `wandb sync` takes them in this order
    assert [step for step, _ in series(history(records(first)), "train/loss")] == [1, 2, 3, 4]
    assert [step for step, _ in series(history(records(second)), "train/loss")] == [3, 4, 5, 6]
    assert summary(records(second))["trainwire/status"] == "interrupted"
    # the config comes with the run's start, in the first part
    assert "optimizer" in {item.key for item in of_type(records(first), "run")[0].config.update}


def test_follow_writes_while_the_run_goes_on_and_returns_when_it_ends(tmp_path: Path) -> None:
    run = export_streams.start(tmp_path, total_steps=20)
    exit_codes: list[int] = []
    follower = threading.Thread(target=lambda: exit_codes.append(export(tmp_path, "--follow", "--poll", "0.05")))
    follower.start()
    for step in range(1, 21):
        run.step(step, loss=1.0 / step)
        if step == 10:
            # the export is live: the offline run exists while the run goes on
            while not offline_runs(tmp_path, run.run_id):
                assert follower.is_alive()
                follower.join(timeout=0.05)
    run.phase_ended("train")
    run.finish("succeeded")
    follower.join(timeout=120)
    assert not follower.is_alive() and exit_codes == [0]
    # a part per batch the export wrote (each whole once written), which `wandb sync` uploads in order as one run
    parts = [records(offline) for offline in offline_runs(tmp_path, run.run_id)]
    assert [step for found in parts for step, _ in series(history(found), "train/loss")] == list(range(1, 21))
    assert of_type(parts[-1], "exit")[0].exit_code == 0


def test_every_logged_step_arrives_once_the_throttled_ones_too(tmp_path: Path) -> None:
    run_id = export_streams.readme_run(tmp_path)
    assert export(tmp_path) == 0
    assert export(tmp_path) == 0  # nothing new: no second offline run
    (offline,) = offline_runs(tmp_path, run_id)
    assert series(history(records(offline)), "train/loss") == export_streams.README_LOSSES


def config_of(found: list[Any]) -> dict[str, Any]:
    return {item.key: json.loads(item.value_json) for item in of_type(found, "run")[0].config.update}


def test_a_search_is_one_wandb_run_per_trial_grouped_under_the_search_with_its_name_and_tags(tmp_path: Path) -> None:
    run_id = export_streams.search_run(tmp_path)
    assert export(tmp_path, "--project", "tw") == 0

    (search,) = offline_runs(tmp_path, run_id)
    started = of_type(records(search), "run")[0]
    assert (started.display_name, started.run_group) == (export_streams.SEARCH_NAME, run_id)
    assert list(started.tags) == export_streams.SEARCH_TAGS
    assert history(records(search)) == []  # every step is a trial's
    trials = {n: records(offline) for n in (1, 2) for offline in offline_runs(tmp_path, f"{run_id}-trial-{n}")}
    assert sorted(trials) == [1, 2]
    for number, found in trials.items():
        run = of_type(found, "run")[0]
        assert (run.display_name, run.run_group) == (f"{export_streams.SEARCH_NAME} trial {number}", run_id)
        assert list(run.tags) == export_streams.SEARCH_TAGS
        params = {name: value for name, value in config_of(found).items() if name not in ("trainwire", "_wandb")}
        assert params == export_streams.TRIAL_PARAMS[number]
    assert series(history(trials[1]), "train/loss") == [(1, 1.0), (2, 0.5)]
    assert series(history(trials[1]), "eval/loss") == [(2, 0.4)]
    assert series(history(trials[2]), "train/loss") == [(1, 2.0)]
    assert summary(trials[1])["trial/objective"] == 0.4
    assert [summary(trials[n])["trainwire/status"] for n in (1, 2)] == ["succeeded", "pruned"]
    assert [of_type(trials[n], "exit")[0].exit_code for n in (1, 2)] == [0, 0]


def test_a_later_part_of_a_named_run_keeps_its_name_and_tags_from_the_journal(tmp_path: Path) -> None:
    run = Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None, name="two parts", tags=["resumed-export"])
    run.start(provenance=False)
    run.step(1, loss=1.0)
    assert export(tmp_path) == 0
    run.step(2, loss=0.5)
    run.finish("succeeded")
    assert export(tmp_path) == 0
    parts = [of_type(records(offline), "run")[0] for offline in offline_runs(tmp_path, run.run_id)]
    assert [(part.display_name, list(part.tags)) for part in parts] == [("two parts", ["resumed-export"])] * 2
