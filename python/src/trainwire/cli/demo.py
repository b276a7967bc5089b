"""`trainwire demo`: a real (tiny) transformers training that writes the trainwire stream.

`trainwire demo train --output-dir DIR` trains a one-layer GPT-2 on synthetic text (CPU,
no download) through phases `model_load`, `data_prepare`, `train`, `save`; it honours a stop
by control file or by SIGINT/SIGTERM and exits with the run's exit code (2 when stopped).
`--resume` continues from the last checkpoint in DIR.

`trainwire demo run` starts `demo train` in a child process, follows its stream live with the
`trainwire tail --follow` view, and ends with `trainwire validate`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trainwire.cli.arguments import output_directory
from trainwire.contract.errors import RunInterrupted
from trainwire.contract.layout import STREAM_FILE
from trainwire.stop import StopControl
from trainwire.writer.fields import UNSET
from trainwire.writer.run import Run

__all__ = ["main"]

MODEL_DIR = "model"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainwire demo", description="A tiny real training that writes the stream.")
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train the demo model (writes DIR/progress.jsonl)")
    train.add_argument("--output-dir", required=True, type=output_directory)
    train.add_argument("--steps", type=int, default=150, help="optimisation steps (default 150)")
    train.add_argument("--eval-every", type=int, default=25, help="evaluate every K steps (0: never; default 25)")
    train.add_argument("--save-every", type=int, default=50, help="checkpoint every K steps (0: never; default 50)")
    train.add_argument("--resume", action="store_true", help="resume from the last checkpoint in the output dir")
    train.add_argument(
        "--step-delay", type=float, default=0.1, help="seconds to sleep per step, to watch (default 0.1)"
    )
    run = commands.add_parser("run", help="train in the background, follow the stream live, validate it")
    run.add_argument("--output-dir", type=output_directory, help="default: a new temporary directory")
    run.add_argument("--steps", type=int, default=150)
    run.add_argument("--step-delay", type=float, default=0.1)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `trainwire demo ...`; returns the process exit code."""
    args = _parser().parse_args(argv)
    if args.command == "train":
        return train(
            args.output_dir,
            steps=args.steps,
            eval_every=args.eval_every,
            save_every=args.save_every,
            resume=args.resume,
            step_delay=args.step_delay,
        )
    return run_demo(args.output_dir, steps=args.steps, step_delay=args.step_delay)


# -- demo train ---------------------------------------------------------------------------


def train(
    output_dir: Path,
    *,
    steps: int = 150,
    eval_every: int = 25,
    save_every: int = 50,
    resume: bool = False,
    step_delay: float = 0.0,
) -> int:
    """Train the demo model into `output_dir`; returns the exit code of the run."""
    output_dir.mkdir(parents=True, exist_ok=True)
    run = Run(output_dir, producer={"name": "trainwire-demo", "version": _version()})
    stop = StopControl(output_dir, run=run).install_signal_handlers()
    try:
        with run:
            _train_phases(run, stop, output_dir, steps, eval_every, save_every, resume, step_delay)
    except RunInterrupted:
        pass  # written as run.finished interrupted; the exit code says so
    finally:
        stop.uninstall()
    return run.exit_code if run.exit_code is not None else 1


def _train_phases(
    run: Run,
    stop: StopControl,
    output_dir: Path,
    steps: int,
    eval_every: int,
    save_every: int,
    resume: bool,
    step_delay: float,
) -> None:
    checkpoint = _last_checkpoint(output_dir) if resume else None
    resumed_from: Any = UNSET
    if checkpoint is not None:
        from trainwire.integrations.transformers import checkpoint_origin

        resumed_from = checkpoint_origin(checkpoint)
    config = {"model": "gpt2-tiny", "steps": steps, "eval_every": eval_every, "save_every": save_every}
    run.start(total_steps=steps, config=config, seed=0, world_size=1, resumed_from=resumed_from)

    with run.phase("model_load"):
        stop.raise_if_stopped()
        # Imported here so that run.started reaches the stream before torch loads.
        from trainwire.cli import demo_model as _demo_model

        model = _demo_model.build_model()
    with run.phase("data_prepare"):
        stop.raise_if_stopped()
        trainer = _demo_model.build_trainer(
            output_dir,
            model=model,
            train_size=256,
            eval_size=64,
            max_steps=steps,
            eval_strategy="steps" if eval_every else "no",
            eval_steps=eval_every or None,
            save_strategy="steps" if save_every else "no",
            save_steps=save_every or None,
        )
    stop.raise_if_stopped()

    from trainwire.integrations.transformers import attach

    callback = attach(trainer, run, stop=stop)
    if step_delay > 0:
        trainer.add_callback(_demo_model.StepDelay(step_delay))
    result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint is not None else None)
    # A stopped training returns normally: nothing after this line may promote the model.
    if callback.stopped:
        run.finish("interrupted", checkpoint=callback.stop_checkpoint)
    callback.raise_if_stopped()

    with run.phase("save"):
        trainer.save_model(str(output_dir / MODEL_DIR))
    run.finish(
        "succeeded",
        metrics={"train_loss": result.training_loss},
        artifacts={"model": output_dir / MODEL_DIR},
        checkpoint=_last_checkpoint(output_dir),
    )


def _last_checkpoint(output_dir: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    found = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
    return Path(found) if found else None


def _version() -> str:
    from trainwire import __version__

    return __version__


# -- demo run -------------------------------------------------------------------------------


def run_demo(output_dir: Path | None, *, steps: int = 150, step_delay: float = 0.1) -> int:
    """Train in a child process, follow its stream live, then validate it."""
    from trainwire.cli.tail import tail

    directory = output_dir or Path(tempfile.mkdtemp(prefix="trainwire-demo-"))
    directory.mkdir(parents=True, exist_ok=True)
    stream = directory / STREAM_FILE
    _say(f"trainwire demo: training into {directory} (Ctrl+C stops cleanly, twice kills)")
    with open(directory / "demo-train.log", "ab") as log:
        child = _spawn(
            ["trainwire.cli.demo", "train", "--output-dir", str(directory), "--steps", str(steps)]
            + ["--step-delay", str(step_delay)],
            stdout=log,
            stderr=log,
        )
        # The view ends on run.finished; if the child dies without one, its exit ends it.
        child_exited = threading.Event()
        threading.Thread(target=lambda: (child.wait(), child_exited.set()), daemon=True).start()
        with _forward_interrupts(child):
            tail(stream, follow=True, stop=child_exited)
            train_code = child.wait()
    validate_code = subprocess.call([sys.executable, "-m", "trainwire", "validate", str(stream)])
    _say(f"trainwire demo: training exited {train_code}, validate exited {validate_code}; files in {directory}")
    return train_code or validate_code


def _spawn(module_and_arguments: list[str], **options: Any) -> subprocess.Popen[bytes]:
    # Its own process group: Ctrl+C reaches only this parent, which forwards it once per press
    # (the child's first signal stops it cleanly, a second one kills it).
    if os.name == "nt":
        options["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        options["start_new_session"] = True
    return subprocess.Popen([sys.executable, "-m", *module_and_arguments], **options)


@contextlib.contextmanager
def _forward_interrupts(child: subprocess.Popen[bytes]) -> Iterator[None]:
    """While active, SIGINT/SIGTERM to this process are passed on to the training child."""

    def forward(number: int, frame: object) -> None:
        if child.poll() is not None:
            return
        child.send_signal(signal.CTRL_BREAK_EVENT if os.name == "nt" else number)  # type: ignore[attr-defined]

    previous = {number: signal.signal(number, forward) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
