"""The integrations' documented snippets (TRL, Lightning's logger, Keras, Accelerate,
Optuna, a CLI tool's `--progress json`, `torchrun`), run as real processes as printed,
slowed only by a preamble, and stopped by a real signal or a real control file (`trainwire
stop`): no traceback of theirs, the process's exit code is `run.finished.exit_code` (or the
docs say why not), and the checkpoint to resume from is named, or `run.finished` says there
is none. (Ray Tune and Ray Train: test_ray_snippets; the Lightning callback and transformers:
test_doc_snippets.)"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import ROOT
from support.stopping import (
    SLOW_ACCELERATE_LOG,
    SLOW_KERAS_STEP,
    SLOW_LOGGING,
    SLOW_LOSS,
    SLOW_OPTUNA_REPORT,
    SLOW_RUN_STEP,
    SLOW_TRAINER_STEP,
    TIMEOUT_S,
    Cell,
    assert_cells_stopped,
    assert_checkpoint_named,
    assert_no_stop_checkpoint,
    assert_stopped,
    cli_stop,
    python_block,
    send,
    snippet_script,
    stopped_at_step,
    stopped_cells,
    stopped_on_stdout,
)
from support.stream_files import free_port, stream_of

pytestmark = pytest.mark.slow


def cells_of(document: str, heading: str, stream: str, *stops: str) -> list[Cell]:
    """One cell per way to stop, each running the snippet under `heading` as printed."""
    snippet = python_block(ROOT / document, heading)
    return [Cell(stop, snippet, stream, stop) for stop in stops]


def stopper(stop: str, output_dir: Path) -> Callable[[subprocess.Popen[str]], object]:
    """`trainwire stop OUTPUT_DIR` (the control file) or the signal named `stop`."""
    if stop == "control_file":
        return lambda _: cli_stop(output_dir)
    return send(signal.Signals[stop.upper()])


def test_the_plain_loop_of_the_stop_page_ends_a_stop_with_its_exit_code(tmp_path: Path) -> None:
    heading = "## A plain `with Run(...)` listens by itself"
    cells = cells_of("docs/stop.md", heading, "out/progress.jsonl", "control_file", "sigterm", "sigint")
    ended, exits = stopped_cells(tmp_path, cells, preamble=SLOW_RUN_STEP)
    assert_cells_stopped(tmp_path, cells, ended, exits)
    for cell in cells:
        assert_no_stop_checkpoint(cell.stream_in(tmp_path))  # no `on_stop` in this one: null, as documented


def test_the_trl_snippet_ends_a_stop_with_its_exit_code_and_checkpoint(tmp_path: Path) -> None:
    cells = cells_of("docs/integrations.md", "## TRL", "progress.jsonl", "control_file", "sigterm")
    ended, exits = stopped_cells(tmp_path, cells, preamble=SLOW_TRAINER_STEP)
    assert_cells_stopped(tmp_path, cells, ended, exits)  # it exited 0 after a stop before it exited with the run's code
    for cell in cells:
        stream = cell.stream_in(tmp_path)
        assert (stream.parent / assert_checkpoint_named(stream) / "model.safetensors").is_file()


def test_the_lightning_logger_snippet_ends_a_stop_with_its_exit_code_and_checkpoint(tmp_path: Path) -> None:
    heading = "### Lightning's logger door"
    cells = cells_of("docs/integrations.md", heading, "progress.jsonl", "control_file", "sigterm", "sigint")
    ended, exits = stopped_cells(tmp_path, cells, preamble=SLOW_LOSS.format(delay=0.3))
    # it exited 0 (`trainwire stop`, SIGTERM: Lightning's own exit) or 1 (Ctrl-C), with no checkpoint for a signal
    assert_cells_stopped(tmp_path, cells, ended, exits)
    for cell in cells:
        assert assert_checkpoint_named(cell.stream_in(tmp_path)).startswith("checkpoints/stop-step=")


def test_the_keras_snippet_ends_a_stop_with_its_exit_code_and_checkpoint(tmp_path: Path) -> None:
    cells = cells_of("docs/integrations.md", "## Keras 3", "progress.jsonl", "control_file", "sigint")
    ended, exits = stopped_cells(tmp_path, cells, preamble=SLOW_KERAS_STEP)
    assert_cells_stopped(tmp_path, cells, ended, exits)
    for cell in cells:
        assert assert_checkpoint_named(cell.stream_in(tmp_path)).startswith("checkpoints/stop-step=")


def test_the_accelerate_snippet_ends_a_stop_with_its_exit_code_and_checkpoint(tmp_path: Path) -> None:
    cells = cells_of("docs/integrations.md", "## Accelerate's trackers", "progress.jsonl", "control_file", "sigterm")
    ended, exits = stopped_cells(tmp_path, cells, preamble=SLOW_ACCELERATE_LOG)
    assert_cells_stopped(tmp_path, cells, ended, exits)  # it exited 0, and saved nothing, before
    for cell in cells:
        stream = cell.stream_in(tmp_path)
        assert list((stream.parent / assert_checkpoint_named(stream)).glob("random_states_*.pkl"))  # save_state's
        assert not [line for line in stream_of(stream) if line["event"] == "eval.completed"]  # none after the stop


def test_the_optuna_snippet_ends_a_stop_with_its_exit_code_and_no_checkpoint(tmp_path: Path) -> None:
    heading = "## Hyperparameter search: Optuna and Ray Tune"
    stream = "out-optuna/progress.jsonl"
    cells = cells_of("docs/integrations.md", heading, stream, "control_file", "sigterm", "sigint")
    ended, exits = stopped_cells(tmp_path, cells, preamble=SLOW_OPTUNA_REPORT)
    assert_cells_stopped(tmp_path, cells, ended, exits)
    for cell in cells:
        assert_no_stop_checkpoint(cell.stream_in(tmp_path))  # a study keeps its trials in its storage
        ended_trials = [line for line in stream_of(cell.stream_in(tmp_path)) if line["event"] == "trial.ended"]
        assert 1 <= len(ended_trials) < 4  # the running trial ended, no other started


@pytest.mark.parametrize("stop", ["sigterm", "sigint"], ids=["sigterm", "ctrl-c"])
def test_the_progress_json_snippet_ends_a_signal_stop_with_its_exit_code(tmp_path: Path, stop: str) -> None:
    script = snippet_script(
        tmp_path, "docs/python.md", "## A command-line tool's `--progress json`", preamble=SLOW_LOGGING
    )
    ended = stopped_on_stdout([sys.executable, str(script)], stopper(stop, tmp_path), cwd=tmp_path)
    stream = tmp_path / "stdout.jsonl"
    stream.write_text(ended.stdout, encoding="utf-8")  # NDJSON only: the stream owns standard output
    assert_stopped(ended, stream, stop)  # it exited 0 after a stop before it ended with the run's code
    assert_no_stop_checkpoint(stream)
    # no output directory, so no control file: the run says so, and `trainwire stop` is not offered
    assert stream_of(stream)[0]["stop_channels"] == ["sigint", "sigterm", "api"]


def test_torchrun_forwards_sigterm_and_every_rank_ends_the_run_with_its_checkpoint(tmp_path: Path) -> None:
    """docs/integrations.md, "Several processes: torchrun", with SIGTERM to torchrun (a pod's
    deletion): it hands the signal to each worker, which stop at one step; torchrun itself
    exits 1 with its own `SignalException` traceback, as the docs say."""
    example = ROOT / "examples" / "plain_loop.py"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
        "--master-port", str(free_port()), str(example), "runs/ddp", "--steps", "10000", "--step-delay", "0.02",
    ]  # fmt: skip
    output_dir = tmp_path / "runs" / "ddp"
    stream = output_dir / "progress.jsonl"
    ended = stopped_at_step(command, stream, send(signal.SIGTERM), cwd=tmp_path)

    finished = stream_of(stream)[-1]
    assert (finished["event"], finished["status"], finished["reason"]) == ("run.finished", "interrupted", "sigterm")
    ranks = dict(re.findall(r"^rank (\d) ended interrupted at step (\d+)$", ended.stdout, flags=re.M))
    assert ranks == {"0": str(finished["step"]), "1": str(finished["step"])}, (ended.stdout, ended.stderr[-4000:])
    assert ended.returncode == 1  # torchrun's own code after a signal: docs/integrations.md says so
    assert "SignalException" in ended.stderr
    assert f'File "{example}"' not in ended.stderr  # no traceback from the training script
    named = assert_checkpoint_named(stream)
    assert sorted(path.name for path in output_dir.glob("checkpoint-*")) == [named]  # rank 1 saved none
    tail = subprocess.run(
        [sys.executable, "-m", "trainwire", "tail", str(output_dir)], capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert tail.returncode == finished["exit_code"] == 2  # what the docs tell a job script to read
    assert json.loads(stream.read_text(encoding="utf-8").splitlines()[0])["world_size"] == 2
