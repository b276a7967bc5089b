"""The checkpoint to resume from: `Run(..., on_stop=save)` saves it at a stop and
`run.finished` names it; training resumes from it; without one, `tail` shows the last
checkpoint saved, labelled so."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from support.stream_files import of, stream_of

from trainwire import Run, RunInterrupted, request_stop


def train(output_dir: Path, model: torch.nn.Module, first: int, last: int, **resume: object) -> Run:
    """Steps `first..last` of a tiny regression, saving `checkpoint-<step>.pt` at a stop;
    a fresh run is sent SIGTERM at step 5."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    def save(step: int | None) -> Path:
        path = output_dir / f"checkpoint-{step}.pt"
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, path)
        return path

    with Run(output_dir, step_interval_s=0, on_stop=save) as run:
        run.start(total_steps=last, provenance=False, **resume)  # type: ignore[arg-type]
        with run.phase("train"):
            for step in range(first, last + 1):
                inputs = torch.randn(8, 4)
                loss = torch.nn.functional.mse_loss(model(inputs), inputs.sum(dim=1, keepdim=True))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if step == 5 and not resume:
                    signal.raise_signal(signal.SIGTERM)  # preempted (the control file is read every 0.25 s)
                run.step(step, loss=loss.item())
    return run


def test_a_stop_names_the_checkpoint_saved_and_the_training_resumes_from_it(tmp_path: Path) -> None:
    torch.manual_seed(0)
    first = train(tmp_path, torch.nn.Linear(4, 1), 1, 40)
    assert (first.status, first.exit_code) == ("interrupted", 2)
    stream = stream_of(tmp_path / "progress.jsonl")
    finished = stream[-1]
    stop_step = finished["step"]
    assert finished["checkpoint"] == f"checkpoint-{stop_step}.pt"
    assert [(line["step"], line["path"], line["reason"]) for line in of(stream, "checkpoint.saved")] == [
        (stop_step, f"checkpoint-{stop_step}.pt", "stop")
    ]
    assert (stop_step, finished["reason"]) == (5, "sigterm")

    saved = torch.load(tmp_path / finished["checkpoint"])
    model = torch.nn.Linear(4, 1)
    model.load_state_dict(saved["model"])
    resumed_from = {"run_id": first.run_id, "checkpoint": finished["checkpoint"], "step": saved["step"]}
    second = train(tmp_path, model, saved["step"] + 1, 40, resumed_from=resumed_from)
    assert second.status == "succeeded"
    runs = [line for line in stream_of(tmp_path / "progress.jsonl") if line["run_id"] == second.run_id]
    assert runs[0]["resumed_from"] == resumed_from
    assert [line["step"] for line in of(runs, "train.step")] == list(range(stop_step + 1, 41))
    assert not torch.equal(model.weight.detach(), saved["model"]["weight"])  # the loaded model trained on


def test_without_a_stop_checkpoint_tail_shows_the_last_one_saved(tmp_path: Path) -> None:
    with Run(tmp_path, step_interval_s=0) as run:
        run.start(total_steps=None, provenance=False)
        run.step(1)
        run.checkpoint(1, tmp_path / "checkpoint-1")
        request_stop(tmp_path)
        with run.phase("eval"):
            pass
    assert stream_of(tmp_path / "progress.jsonl")[-1]["checkpoint"] is None
    shown = subprocess.run(
        [sys.executable, "-m", "trainwire", "tail", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert "checkpoint checkpoint-1 (last saved)" in shown.stdout, shown.stdout


def test_a_run_on_another_rank_saves_no_stop_checkpoint(tmp_path: Path) -> None:
    """`on_stop` is rank 0's, as every write of a run: under torchrun and Ray Train each other
    rank saved a `checkpoint-None.pt` of its own."""
    saved: list[int | None] = []

    def save(step: int | None) -> Path:
        saved.append(step)
        return tmp_path / f"checkpoint-{step}.pt"

    run = Run(tmp_path, rank=1, on_stop=save)
    with pytest.raises(RunInterrupted), run:  # the caller's own, as in examples/plain_loop.py
        raise RunInterrupted("control_file")
    assert (run.active, saved) == (False, [])
