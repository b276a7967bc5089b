"""The process around the loop: forked children, stdout, interrupts and failures inside the callback."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from support.paths import SCRIPTS
from support.stream_files import of
from support.trainer_streams import events, runs

from trainwire.cli.demo_model import CharDataset, build_trainer, synthetic_corpus
from trainwire.contract.models import EVENT_ADAPTER
from trainwire.integrations.transformers import attach
from trainwire.reader.invariants import check_stream
from trainwire.writer.run import Run

fork_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


class TouchingDataset(CharDataset):
    """Writes to the run from wherever an example is loaded (a DataLoader worker, here)."""

    def __init__(self, run: list[Run]) -> None:
        super().__init__(synthetic_corpus(64))
        self.run = run

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        if self.run:
            self.run[0].heartbeat()
            self.run[0].finish("failed", error=RuntimeError("a worker must never finish the run"))
        return super().__getitem__(i)


@fork_only
def test_dataloader_workers_forked_from_the_trainer_never_write(tmp_path: Path) -> None:
    holder: list[Run] = []
    trainer = build_trainer(tmp_path, max_steps=4, dataloader_num_workers=1, eval_size=0)
    trainer.train_dataset = TouchingDataset(holder)
    callback = attach(trainer, step_interval_s=0, heartbeat_interval_s=None)
    assert callback.run is not None
    holder.append(callback.run)
    assert torch.multiprocessing.get_start_method() == "fork"
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    assert of(stream, "run.heartbeat") == []
    assert [line["status"] for line in of(stream, "run.finished")] == ["succeeded"]
    assert stream[-1]["step"] == 4


@fork_only
def test_a_forked_child_leaving_the_run_writes_nothing(tmp_path: Path) -> None:
    with Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None) as run:
        run.start(total_steps=2, provenance=False)
        run.step(1)
        child = os.fork()
        if child == 0:  # the child leaves the `with` block as a failing run would
            try:
                run.step(99)
                run.__exit__(RuntimeError, RuntimeError("child"), None)
            finally:
                os._exit(0)
        assert os.waitpid(child, 0)[1] == 0
        run.step(2)
    stream = events(tmp_path / "progress.jsonl")
    assert [line["step"] for line in of(stream, "train.step")] == [1, 2]
    assert [line["status"] for line in of(stream, "run.finished")] == ["succeeded"]


def test_with_the_stream_on_stdout_stdout_carries_ndjson_only(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "train_stdout.py"), str(tmp_path)],
        capture_output=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]
    lines = result.stdout.splitlines()
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    assert check_stream(result.stdout) == []
    trained, evaluated = runs([json.loads(line) for line in lines])
    assert [line["step"] for line in of(trained, "train.step")] == list(range(1, 11))
    assert of(evaluated, "eval.completed")
    # The trainer's printed log dicts went to stderr.
    assert result.stderr.count(b"{'loss': ") == 10
    assert result.stdout == (tmp_path / "progress.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("event", "step", "finished"),
    [
        # while run.finished itself is written: the run is over, no second line
        ("run.finished", None, ("succeeded", None)),
        # while a step is written: Ctrl-C ends the run interrupted, once
        ("train.step", 2, ("interrupted", "sigint")),
    ],
)
def test_a_keyboard_interrupt_inside_a_sink_writes_one_run_finished(
    tmp_path: Path, event: str, step: int | None, finished: tuple[str, str | None]
) -> None:
    def interrupt(line: Any) -> None:
        if line["event"] == event and step in (None, line.get("step")):
            raise KeyboardInterrupt

    trainer = build_trainer(tmp_path, max_steps=5)
    attach(trainer, step_interval_s=0, callbacks=[interrupt])
    with pytest.raises(KeyboardInterrupt):
        trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    assert [(line["status"], line["reason"]) for line in of(stream, "run.finished")] == [finished]


def test_a_hook_that_failed_is_disabled(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    trainer = build_trainer(tmp_path, max_steps=6, eval_strategy="steps", eval_steps=2)
    callback = attach(trainer, step_interval_s=0)
    assert callback.run is not None
    calls: list[int] = []
    write_eval = callback.run.eval

    def flaky_eval(step: int, *args: Any, **kwargs: Any) -> None:
        calls.append(step)
        if len(calls) == 1:
            raise RuntimeError("a bad metric")
        write_eval(step, *args, **kwargs)

    callback.run.eval = flaky_eval  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="trainwire.integrations.transformers"):
        trainer.train()
    assert calls == [2]  # not called again after it failed: its state may be half written
    assert [record.getMessage().split()[1] for record in caplog.records] == ["on_evaluate"]
    stream = events(tmp_path / "progress.jsonl")
    assert of(stream, "eval.completed") == [] and stream[-1]["status"] == "succeeded"
