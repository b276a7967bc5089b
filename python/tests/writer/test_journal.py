"""The run journal of each run beside the stream, and `trainwire runs`, `diff` and `journal rebuild`,
run as real processes on streams written by the real emitter."""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import trainwire
from support.paths import ROOT
from support.step_files import kept_records

from trainwire import Run
from trainwire.contract.layout import (
    CONFIG_FILE,
    DIFF_FILE,
    JOURNALS_DIR,
    NOTES_FILE,
    SERIES_FILE,
    SUMMARY_FILE,
    run_journal_dir,
)
from trainwire.reader.stream_summary import summarise_stream


def train(
    directory: Path,
    *,
    lr: float = 0.1,
    steps: int = 6,
    finish: str | None = "succeeded",
    restart_at: int | None = None,
    **start: Any,
) -> str:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=5)
    run.start(
        total_steps=steps,
        config={"lr": lr, "optim": {"name": "adamw", "betas": [0.9, 0.99]}, "wandb": {"api_key": "k-123"}},
        seed=7,
        **start,
    )
    with run.phase("train"):
        for step in range(1, steps + 1):
            run.step(step, loss=2.0 / step + lr, learning_rate=lr, metrics={"tokens": step * 10})
            if step == restart_at:
                run.restarted("oom", step=step - 1, batch_size_from=8, batch_size_to=4)
            if step % 3 == 0:
                run.eval(step, {"loss": 1.5 / step + lr, "accuracy": 0.5 + step / 100})
                run.checkpoint(step, directory / f"checkpoint-{step}")
    if finish is not None:
        run.finish(finish, checkpoint=directory / f"checkpoint-{steps // 3 * 3}")
    else:
        run.close()  # a process that died: no run.finished
    return run.run_id


def test_the_journal_is_written_beside_the_stream_and_matches_a_rebuild(tmp_path: Path) -> None:
    run_id = train(tmp_path, restart_at=4)
    journal = run_journal_dir(tmp_path, run_id)
    assert {p.name for p in tmp_path.iterdir()} == {"progress.jsonl", JOURNALS_DIR}
    assert {CONFIG_FILE, NOTES_FILE, SUMMARY_FILE, SERIES_FILE} <= {p.name for p in journal.iterdir()}
    config = json.loads((journal / CONFIG_FILE).read_text())
    assert config["optim"] == {"name": "adamw", "betas": [0.9, 0.99]}
    assert config["wandb"]["api_key"] != "k-123"  # redacted like run.started.config

    live = (journal / SUMMARY_FILE).read_text()
    live_series = (journal / SERIES_FILE).read_text()
    summary = json.loads(live)
    assert summary["run_id"] == run_id and summary["status"] == "succeeded" and summary["exit_code"] == 0
    assert summary["step"] == 6 and summary["attempts"] == 2 and summary["checkpoint"] == "checkpoint-6"
    assert summary["best"]["loss"] == {"value": pytest.approx(2.0 / 6 + 0.1), "step": 6}
    assert summary["best"]["eval/accuracy"]["step"] == 6  # higher is better
    assert "learning_rate" in summary["last"] and "learning_rate" not in summary["best"]
    assert summary["summary_version"] == 2 and summary["seeds"] == {"seed": 7} and summary["notes"] == 0

    snapshot = json.loads(live_series)  # version 2: the run's state and its view events
    assert snapshot["snapshot_version"] == 2 and snapshot["state"]["attempt"] == 2
    assert snapshot["state"]["status"] == "succeeded" and snapshot["state"]["step"] == 6
    assert [line["event"] for line in snapshot["events"]] == [
        "run.started",
        "phase.started",
        "phase.ended",
        "run.finished",
    ]

    (journal / SUMMARY_FILE).unlink()
    (journal / SERIES_FILE).unlink()
    result = trainwire("journal", "rebuild", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (journal / SUMMARY_FILE).read_text() == live
    assert (journal / SERIES_FILE).read_text() == live_series


def test_the_summary_validates_against_its_schema(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    run_id = train(tmp_path)
    schema = json.loads((ROOT / "schemas" / "bundled" / "summary-v1.schema.json").read_text())
    Draft202012Validator(schema).validate(json.loads((run_journal_dir(tmp_path, run_id) / SUMMARY_FILE).read_text()))


def test_a_resumed_run_keeps_its_own_journal_and_never_touches_the_earlier_one(tmp_path: Path) -> None:
    first = train(tmp_path, finish="interrupted")
    (run_journal_dir(tmp_path, first) / NOTES_FILE).write_text("keep me\n")
    second = train(tmp_path, lr=0.05, resumed_from={"run_id": first, "checkpoint": "checkpoint-6", "step": 6})
    summary = json.loads((run_journal_dir(tmp_path, second) / SUMMARY_FILE).read_text())
    assert summary["run_id"] == second and summary["earlier_runs"] == [first] and summary["resumed_from"] == first
    assert json.loads((run_journal_dir(tmp_path, second) / CONFIG_FILE).read_text())["lr"] == 0.05
    assert json.loads((run_journal_dir(tmp_path, first) / CONFIG_FILE).read_text())["lr"] == 0.1
    assert json.loads((run_journal_dir(tmp_path, first) / SUMMARY_FILE).read_text())["status"] == "interrupted"
    assert (run_journal_dir(tmp_path, first) / NOTES_FILE).read_text() == "keep me\n"  # never overwritten
    assert summarise_stream(tmp_path / "progress.jsonl") == summary


def git(cwd: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", *arguments],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def committed_repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git work tree in `tmp_path/repo` with `files` committed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    return repo


def test_a_dirty_tree_leaves_a_masked_diff_referenced_from_run_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = committed_repo(tmp_path, {"train.py": "lr = 0.1\n", ".env": "HF_TOKEN=old\n"})
    (repo / "train.py").write_text("lr = 0.2\nDB = 'postgres://me:hunter2@db/x'\nHF_TOKEN=hf_abcdefgh1234\n")
    (repo / ".env").write_text("HF_TOKEN=hf_new_secret_value\n")
    monkeypatch.chdir(repo)
    out = tmp_path / "out"
    run_id = train(out)

    diff = (run_journal_dir(out, run_id) / DIFF_FILE).read_bytes()
    text = diff.decode()
    assert "+lr = 0.2" in text
    assert "hunter2" not in text and "postgres://me:<redacted>@db/x" in text
    assert "hf_abcdefgh1234" not in text
    assert "hf_new_secret_value" not in text and "left out (the name looks like a secret): .env" in text
    started = json.loads((out / "progress.jsonl").read_text().splitlines()[0])
    assert started["provenance"]["git_dirty"] is True
    reference = {"path": f"{JOURNALS_DIR}/{run_id}/{DIFF_FILE}", "sha256": hashlib.sha256(diff).hexdigest()}
    assert started["provenance"]["dirty_diff"] == reference
    summary = json.loads((run_journal_dir(out, run_id) / SUMMARY_FILE).read_text())
    assert summary["dirty_diff"] == reference
    assert trainwire("validate", str(out / "progress.jsonl")).returncode == 0


def test_a_large_diff_is_cut_with_a_note(tmp_path: Path) -> None:
    from trainwire.writer.journal import dirty_diff

    repo = committed_repo(tmp_path, {"big.txt": "x\n"})
    (repo / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    text = dirty_diff(repo, limit_bytes=4096)
    assert text is not None and len(text.encode()) < 4096 + 100
    assert text.endswith("bytes\n") and "# trainwire: cut at" in text


def test_runs_lists_every_run_with_status_stale_included(tmp_path: Path) -> None:
    finished = train(tmp_path / "a")
    died = train(tmp_path / "team" / "b", finish=None)
    # a stream written by another writer, without a journal
    third = tmp_path / "c"
    third.mkdir()
    lines = (tmp_path / "a" / "progress.jsonl").read_text().splitlines()
    (third / "progress.jsonl").write_text("\n".join(line.replace(finished, "other-writer-1") for line in lines) + "\n")

    result = trainwire("runs", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["run_id"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {finished, died, "other-writer-1"}
    assert rows[finished]["status"] == "succeeded" and rows[finished]["step"] == 6
    assert rows[died]["status"] == "running"  # silent for less than three 5 s heartbeats
    assert rows["other-writer-1"]["status"] == "succeeded" and rows["other-writer-1"]["best_loss"] is not None

    later = trainwire("runs", str(tmp_path), "--json", "--stale-after", "0.001")
    assert {row["run_id"]: row["status"] for row in json.loads(later.stdout)}[died] == "stale"

    only = trainwire("runs", str(tmp_path), "--status", "succeeded")
    assert died not in only.stdout and finished in only.stdout
    printed = only.stdout.splitlines()
    assert str(tmp_path / "a") in printed and printed[printed.index(str(tmp_path / "a")) + 1].startswith("run_id")


def test_diff_shows_config_provenance_and_metrics_side_by_side(tmp_path: Path) -> None:
    a = train(tmp_path / "a", lr=0.1)
    b = train(tmp_path / "b", lr=0.3)
    result = trainwire("diff", str(tmp_path / "a"), str(tmp_path / "b" / "progress.jsonl"), "--json")
    assert result.returncode == 0, result.stderr
    comparison = json.loads(result.stdout)
    assert comparison["runs"] == [a, b]
    assert comparison["config"] == {"lr": [0.1, 0.3]}  # only what differs
    assert comparison["metrics"]["best loss"] == [pytest.approx(2.0 / 6 + 0.1), pytest.approx(2.0 / 6 + 0.3)]
    table = trainwire("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert "config" in table.stdout and "lr" in table.stdout and "0.3" in table.stdout

    missing = trainwire("diff", str(tmp_path / "a"), str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "no progress.jsonl" in missing.stderr and "Traceback" not in missing.stderr


def test_a_journal_that_cannot_be_written_never_breaks_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / JOURNALS_DIR).write_text("")  # a file where the journals go: none can be written
    run_id = train(tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    assert lines[-1]["event"] == "run.finished" and lines[-1]["status"] == "succeeded" and lines[-1]["run_id"] == run_id
    assert any("journal" in record.getMessage() for record in caplog.records)


def test_journal_false_writes_only_the_stream(tmp_path: Path) -> None:
    with Run(tmp_path, journal=False, heartbeat_interval_s=None) as run:
        run.start(config={"lr": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["progress.jsonl"]


def test_untracked_files_make_the_tree_dirty_and_text_ones_join_the_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = committed_repo(tmp_path, {"train.py": "lr = 0.1\n"})
    (repo / "model.py").write_text("TOKEN = 'postgres://me:hunter2@db/x'\nlayers = 4\n")  # only a new file
    (repo / "weights.bin").write_bytes(b"\x00\x01\x02" * 100)
    (repo / "id_rsa").write_text("PRIVATE\n")
    monkeypatch.chdir(repo)
    out = tmp_path / "out"
    run_id = train(out)
    started = json.loads((out / "progress.jsonl").read_text().splitlines()[0])
    assert started["provenance"]["git_dirty"] is True
    text = (run_journal_dir(out, run_id) / DIFF_FILE).read_text()
    assert "+layers = 4" in text and "hunter2" not in text
    assert "not included (binary or over the size cap): weights.bin" in text
    assert "PRIVATE" not in text and "left out (the name looks like a secret): id_rsa" in text


def test_the_runs_own_output_directory_does_not_make_the_tree_dirty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = committed_repo(tmp_path, {"train.py": "lr = 0.1\n"})
    monkeypatch.chdir(repo)
    first = train(repo / "out")  # inside the work tree, not ignored: the run's own files
    started = json.loads((repo / "out" / "progress.jsonl").read_text().splitlines()[0])
    assert started["provenance"]["git_dirty"] is False
    assert not (run_journal_dir(repo / "out", first) / DIFF_FILE).exists()
    (repo / "notes.txt").write_text("a change to the tree\n")  # anything else still counts
    train(repo / "out")
    lines = [json.loads(line) for line in (repo / "out" / "progress.jsonl").read_text().splitlines()]
    second_started = [line for line in lines if line["event"] == "run.started"][-1]
    assert second_started["provenance"]["git_dirty"] is True


def test_the_live_snapshot_holds_what_a_reader_decodes_of_non_finite_values(tmp_path: Path) -> None:
    # a non-finite value is written as null: the state the journal folds live is a reader's
    run = Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=5)
    run.step(1, loss=float("nan"), metrics={"x": float("inf")})
    run.step(2, loss=1.0)
    run.step(3, loss=float("nan"), learning_rate=float("inf"), metrics={"é": float("nan")})
    run.eval(3, {"loss": 1.0})
    run.step(4, loss=float("inf"))
    run.finish("succeeded")
    journal = run_journal_dir(tmp_path, run.run_id)
    live = (journal / SERIES_FILE).read_text(), (journal / SUMMARY_FILE).read_text()
    snapshot = json.loads(live[0])
    assert snapshot["state"]["step"] == 4 and snapshot["state"]["loss"] is None
    assert snapshot["store"]["runs"][0]["series"]["loss"]["count"] == 1  # the one finite loss
    result = trainwire("journal", "rebuild", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert ((journal / SERIES_FILE).read_text(), (journal / SUMMARY_FILE).read_text()) == live


def test_kept_steps_with_non_finite_values_are_kept_as_null(tmp_path: Path) -> None:
    # the throttle leaves every step but the first out of the stream: each is kept, a NaN as null
    run = Run(tmp_path, step_interval_s=3600, heartbeat_interval_s=None)
    run.start(total_steps=20)
    for step in range(1, 21):
        run.step(step, loss=float("nan") if step % 2 else 1.0 / step, metrics={"x": float("-inf")})
    run.finish("succeeded")
    journal = run_journal_dir(tmp_path, run.run_id)
    kept = kept_records(journal / "steps.jsonl")
    written = [line["step"] for line in map(json.loads, (tmp_path / "progress.jsonl").read_text().splitlines())
               if line["event"] == "train.step"]  # fmt: skip
    assert sorted([record["step"] for record in kept] + written) == list(range(1, 21)) and len(kept) >= 17
    assert all(record["loss"] is None for record in kept if record["step"] % 2)
    assert all(record["metrics"] == {"x": None} for record in kept)
    live = (journal / SERIES_FILE).read_text(), (journal / SUMMARY_FILE).read_text()
    result = trainwire("journal", "rebuild", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert ((journal / SERIES_FILE).read_text(), (journal / SUMMARY_FILE).read_text()) == live


def test_a_journal_that_cannot_be_written_says_so_in_one_line_per_file_and_the_stream_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / JOURNALS_DIR).write_text("a file where the journals go\n")  # no directory can be made under it
    caplog.set_level(logging.DEBUG, logger="trainwire")
    with Run(tmp_path, run_id="no-journal", step_interval_s=3600, heartbeat_interval_s=None) as run:
        run.start(total_steps=600, provenance=False)
        for step in range(1, 601):  # throttled: kept steps for the step file
            run.step(step, loss=1.0 / step)
        run.eval(600, {"loss": 0.5})
    journal = [record for record in caplog.records if record.name == "trainwire.writer.journal"]
    warnings = [record for record in journal if record.levelno == logging.WARNING]
    assert {record.getMessage().split(" in ")[0] for record in warnings} == {
        "trainwire: the journal",
        "trainwire: the step file",
    }
    assert len(warnings) == 2 and len(journal) > 2  # the later failures at DEBUG
    assert all(record.exc_info is None and "Not a directory" in record.getMessage() for record in journal)
    assert run.status == "succeeded"
    events = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    assert [event["event"] for event in events] == [
        "run.started",
        "train.step",
        "train.step",
        "eval.completed",
        "run.finished",
    ]
