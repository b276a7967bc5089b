"""The stop tests' shared fixtures: a documented snippet written out as a script, run as a
real process, stopped once its stream reached a step by a real channel (the control file
through the CLI or TypeScript, a signal), and its ending read back."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.paths import ROOT
from support.stream_files import stream_of

TIMEOUT_S = 120  # a hang fails the test instead of blocking the suite
#: slows the README's `train_one_step` (it draws one `random.random()` a step) to a pace a
#: stop can land in, without touching the snippet itself
SLOW_RANDOM = "import random as _r, time as _t\n_draw = _r.random\n_r.random = lambda: (_t.sleep(0.03), _draw())[1]\n"


def python_block(document: Path, heading: str, index: int = 0) -> str:
    """The `index`-th ```python block after `heading` in `document`, as written there."""
    text = document.read_text(encoding="utf-8")
    start = text.index(heading)
    blocks = re.findall(r"```python\n(.*?)```", text[start:], flags=re.DOTALL)
    return blocks[index]


def readme_example(directory: Path) -> Path:
    """The README's first example, unchanged, followed by `sys.exit(run.exit_code)` (and
    slowed by `SLOW_RANDOM`), as a script in `directory`; it writes into `directory/out`."""
    snippet = python_block(ROOT / "README.md", "## Thirty seconds of Python")
    script = directory / "readme_example.py"
    script.write_text(f"{SLOW_RANDOM}{snippet}import sys\nsys.exit(run.exit_code)\n", encoding="utf-8")
    return script


def cli_stop(output_dir: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """`trainwire stop OUTPUT_DIR ...options` as a process."""
    command = [sys.executable, "-m", "trainwire", "stop", str(output_dir), *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)


def typescript_stop(output_dir: Path, wait_s: float | None = None) -> subprocess.CompletedProcess[str]:
    """TypeScript's `requestStop(output_dir)` in node (the built package); with `wait_s`,
    `requestStopAndWait` waiting that long, whose outcome it prints as JSON."""
    module = (ROOT / "typescript" / "dist" / "node.js").as_uri()
    call = "requestStop(process.argv[1])"
    if wait_s is not None:
        call = f"requestStopAndWait(process.argv[1], {json.dumps({'timeoutMs': int(wait_s * 1000)})})"
    script = (
        f"import {{ requestStop, requestStopAndWait }} from {json.dumps(module)};\n"
        f"console.log(JSON.stringify(await {call}));\n"
    )
    command = ["node", "--input-type=module", "-e", script, str(output_dir)]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)


def send(sent: signal.Signals) -> Callable[[subprocess.Popen[str]], None]:
    return lambda process: process.send_signal(sent)


def stopped_at_step(
    command: list[str],
    stream_path: Path,
    stop: Callable[[subprocess.Popen[str]], object],
    *,
    step: int = 3,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Runs `command`, calls `stop(process)` once `stream_path` has a `train.step` at `step`
    or later, and returns how the process ended."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not any(line["event"] == "train.step" and line["step"] >= step for line in stream_of(stream_path)):
            assert process.poll() is None, process.communicate()[1][-4000:]
            assert time.monotonic() < deadline, "training did not start"
            time.sleep(0.05)
        stop(process)
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    finally:
        process.kill()
        process.wait()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def assert_stopped(ended: subprocess.CompletedProcess[str], stream_path: Path, reason: str) -> dict[str, Any]:
    """The process ended as its stream says, `interrupted` for `reason`, with no traceback;
    returns `run.finished`."""
    return assert_exited_stopped(ended.returncode, ended.stderr, stream_path, reason)


def assert_exited_stopped(exit_code: int, stderr: str, stream_path: Path, reason: str) -> dict[str, Any]:
    """`assert_stopped` of a snippet that exited with `exit_code`, having written `stderr`."""
    stream = stream_of(stream_path)
    finished = stream[-1]
    assert finished["event"] == "run.finished", stream[-3:]
    assert (finished["status"], finished["reason"]) == ("interrupted", reason), finished
    assert exit_code == finished["exit_code"] == 2, stderr[-4000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-4000:]
    assert [line["event"] for line in stream].count("stop.requested") == 1
    assert not (stream_path.parent / ".trainwire-stop").exists()
    return finished


#: slows every loss of a snippet's model (`torch.nn.functional.mse_loss`) to a pace a stop can
#: land in, without touching the snippet itself
SLOW_LOSS = (
    "import time as _t, torch.nn.functional as _f\n"
    "_mse = _f.mse_loss\n"
    "_f.mse_loss = lambda *a, **k: (_t.sleep({delay}), _mse(*a, **k))[1]\n"
)


#: slows each `Run.step` (a plain loop's only work)
SLOW_RUN_STEP = (
    "import time as _t\nfrom trainwire import Run as _Run\n"
    "_step = _Run.step\n_Run.step = lambda *a, **k: (_t.sleep(0.05), _step(*a, **k))[1]\n"
)
#: slows each training step of a transformers `Trainer` (TRL's trainers are ones)
SLOW_TRAINER_STEP = (
    "import time as _t, transformers as _tr\n"
    "_step = _tr.Trainer.training_step\n"
    "_tr.Trainer.training_step = lambda *a, **k: (_t.sleep(0.5), _step(*a, **k))[1]\n"
)
#: slows each batch of a Keras `fit` (on the torch backend)
SLOW_KERAS_STEP = (
    "import os as _os, time as _t\n_os.environ.setdefault('KERAS_BACKEND', 'torch')\nimport keras as _k\n"
    "_step = _k.Model.train_step\n_k.Model.train_step = lambda *a, **k: (_t.sleep(0.3), _step(*a, **k))[1]\n"
)
#: slows each `Accelerator.log` (the accelerate snippet's only work per step)
SLOW_ACCELERATE_LOG = (
    "import time as _t, accelerate as _a\n"
    "_log = _a.Accelerator.log\n_a.Accelerator.log = lambda *a, **k: (_t.sleep(0.5), _log(*a, **k))[1]\n"
)
#: slows each intermediate value an Optuna objective reports
SLOW_OPTUNA_REPORT = (
    "import time as _t, optuna as _o\n"
    "_report = _o.trial.Trial.report\n_o.trial.Trial.report = lambda *a, **k: (_t.sleep(0.3), _report(*a, **k))[1]\n"
)
#: slows each `logging.info` (the `--progress json` snippet logs once a step)
SLOW_LOGGING = (
    "import logging as _l, time as _t\n_info = _l.info\n_l.info = lambda *a, **k: (_t.sleep(0.3), _info(*a, **k))[1]\n"
)
#: slows each `tune.report` inside Tune's workers: the trainable handed to `tune.Tuner` is
#: wrapped in one (pickled to the workers with it) that slows the module function there
SLOW_TUNE_REPORT = """import ray.tune as _tune
class _SlowTuner(_tune.Tuner):
    def __init__(self, trainable, *args, **options):
        def slowed(config, _trainable=trainable):
            import time, ray.tune as tune
            report = tune.report
            tune.report = lambda *a, **k: (time.sleep(0.5), report(*a, **k))[1]
            return _trainable(config)
        super().__init__(slowed, *args, **options)
_tune.Tuner = _SlowTuner
"""
#: one Ray cluster for every cell of a process: a snippet's `ray.init` starts it the first
#: time and joins it after; its `ray.shutdown` waits for the process's end (Ray's own exit hook)
ONE_RAY_CLUSTER = """import ray as _ray
_init = _ray.init
_ray.init = lambda *a, **k: None if _ray.is_initialized() else _init(*a, **k)
_ray.shutdown = lambda *a, **k: None
"""
#: slows each loss of a Ray Train worker (`torch.nn.functional.mse_loss`), likewise
SLOW_RAY_TRAIN_LOSS = """import ray.train.torch as _train
class _SlowTrainer(_train.TorchTrainer):
    def __init__(self, loop, *args, **options):
        def slowed(config, _loop=loop):
            import time, torch.nn.functional as f
            mse = f.mse_loss
            f.mse_loss = lambda *a, **k: (time.sleep(0.5), mse(*a, **k))[1]
            return _loop(config)
        super().__init__(slowed, *args, **options)
_train.TorchTrainer = _SlowTrainer
"""


def stopped_on_stdout(
    command: list[str], stop: Callable[[subprocess.Popen[str]], object], *, step: int = 1, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`stopped_at_step` for a process whose stream is its standard output (`--progress json`)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    hang = threading.Timer(TIMEOUT_S, process.kill)  # a hang ends the reading below: the test fails
    hang.start()
    try:
        assert process.stdout is not None
        read = []
        for text in process.stdout:
            read.append(text)
            line = json.loads(text)
            if line["event"] == "train.step" and line["step"] >= step:
                break
        assert read and json.loads(read[-1])["event"] == "train.step", (read, process.communicate()[1][-4000:])
        stop(process)
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    finally:
        hang.cancel()
        process.kill()
        process.wait()
    return subprocess.CompletedProcess(command, process.returncode, "".join(read) + stdout, stderr)


def assert_no_stop_checkpoint(stream_path: Path) -> None:
    """The framework saved no checkpoint: `run.finished` says so (null) and none is saved for the stop."""
    stream = stream_of(stream_path)
    assert stream[-1]["checkpoint"] is None, stream[-1]
    assert not [line for line in stream if line["event"] == "checkpoint.saved" and line["reason"] == "stop"]


def snippet_script(directory: Path, document: str, heading: str, *, preamble: str = "", index: int = 0) -> Path:
    """The documented snippet under `heading` in `document` (relative to the repository),
    unchanged after `preamble`, as a script in `directory`."""
    snippet = python_block(ROOT / document, heading, index)
    script = directory / "snippet.py"
    script.write_text(preamble + snippet, encoding="utf-8")
    return script


def assert_checkpoint_named(stream_path: Path) -> str:
    """`run.finished` names the stop checkpoint, saved with reason `stop`, and it is there."""
    stream = stream_of(stream_path)
    named = stream[-1]["checkpoint"]
    saved = [line["path"] for line in stream if line["event"] == "checkpoint.saved" and line["reason"] == "stop"]
    assert named is not None and saved == [named], (named, saved)
    assert (stream_path.parent / named).exists()
    return named


#: runs documented snippets one after the other in one process, each in a cell directory of
#: its own (its working directory), so that a snippet's imports are paid once for all its
#: cells; each `sys.exit` code is kept in `exits.json` and the process exits with the last
CELLS_RUNNER = """
import json as _json, os as _os, sys as _sys
_top, _exits = _os.getcwd(), {}
for _script, _cell in zip(_sys.argv[1::2], _sys.argv[2::2]):
    _os.makedirs(_cell, exist_ok=True)
    _os.chdir(_cell)
    with open(_os.path.join(_top, _script), encoding="utf-8") as _file:
        _code = compile(_file.read(), _script, "exec")
    try:
        exec(_code, {"__name__": "__main__"})
        _exits[_cell] = 0
    except SystemExit as _exit:
        _exits[_cell] = _exit.code if isinstance(_exit.code, int) else int(_exit.code is not None)
    _os.chdir(_top)
    with open("exits.json", "w", encoding="utf-8") as _file:
        _json.dump(_exits, _file)
_sys.exit(_exits[_cell])
"""


@dataclass(frozen=True)
class Cell:
    """One run of a snippet in a shared process: its cell directory, its stream there, and
    how it is stopped (`control_file`: `trainwire stop`; `sigterm`, `sigint`: the signal)."""

    name: str
    snippet: str
    stream: str
    stop: str
    reason: str | None = None  # `run.finished.reason`, when it is not `stop`

    def stream_in(self, directory: Path) -> Path:
        return directory / self.name / self.stream


def stopped_cells(
    directory: Path, cells: list[Cell], *, preamble: str = "", step: int = 1
) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    """Runs `cells` in one process (`preamble` once, then each snippet in its cell), stops
    each once its stream has a `train.step` at `step` or later; returns how the process
    ended and each cell's exit code."""
    runner = directory / "cells.py"
    runner.write_text(preamble + CELLS_RUNNER, encoding="utf-8")
    arguments = []
    for number, cell in enumerate(cells):
        script = directory / f"snippet-{number}.py"
        script.write_text(cell.snippet, encoding="utf-8")
        arguments += [script.name, cell.name]
    command = [sys.executable, str(runner), *arguments]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=directory)
    hang = threading.Timer(TIMEOUT_S * len(cells), process.kill)  # a hang ends the waits below: the test fails
    hang.start()
    try:
        for cell in cells:
            stream = cell.stream_in(directory)
            while not any(line["event"] == "train.step" and line["step"] >= step for line in stream_of(stream)):
                assert process.poll() is None, (cell, process.communicate()[1][-4000:])
                time.sleep(0.05)
            if cell.stop == "control_file":
                asked = cli_stop(stream.parent)
                assert asked.returncode == 0, (cell, asked.stdout, asked.stderr)  # acknowledged by the run
            else:
                process.send_signal(signal.Signals[cell.stop.upper()])
        stdout, stderr = process.communicate()
    finally:
        hang.cancel()
        process.kill()
        process.wait()
    exits = json.loads((directory / "exits.json").read_text(encoding="utf-8"))
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), exits


def assert_cells_stopped(
    directory: Path, cells: list[Cell], ended: subprocess.CompletedProcess[str], exits: dict[str, int]
) -> None:
    """Each cell ended as its stream says, `interrupted` for the way it was stopped, with no
    traceback; the process exited with the last cell's code."""
    assert ended.returncode == exits[cells[-1].name], ended.stderr[-4000:]
    for cell in cells:
        assert_exited_stopped(exits[cell.name], ended.stderr, cell.stream_in(directory), cell.reason or cell.stop)
