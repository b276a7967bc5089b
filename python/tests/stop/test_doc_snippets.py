"""The documented snippets, run as real processes and stopped by a real signal or a real
control file: no traceback, the process's exit code is `run.finished.exit_code`, and the
checkpoint to resume from is named. (Plain loop: the README's, in test_run_listens.)"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from support.paths import ROOT
from support.stopping import (
    SLOW_LOSS,
    assert_checkpoint_named,
    assert_stopped,
    cli_stop,
    send,
    snippet_script,
    stopped_at_step,
)

pytestmark = pytest.mark.slow

#: defines what the Lightning excerpt uses (`lightning`, `model`, the loaders) from the example it is cut from
LIGHTNING_PREAMBLE = f"""import sys, importlib.util
import lightning
_spec = importlib.util.spec_from_file_location("lightning_train", {str(ROOT / "examples" / "lightning_train.py")!r})
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)
model = _example.TinyRegression(step_delay_s=0.05)
train_loader, val_loader = _example.loader(), _example.loader(16, seed=1)
"""


@pytest.mark.parametrize(
    ("stop", "reason"), [("control_file", "control_file"), ("sigterm", "sigterm")], ids=["trainwire-stop", "sigterm"]
)
def test_the_lightning_snippet_ends_a_stop_with_its_exit_code_and_checkpoint(
    tmp_path: Path, stop: str, reason: str
) -> None:
    script = snippet_script(tmp_path, "docs/integrations.md", "## PyTorch Lightning", preamble=LIGHTNING_PREAMBLE)
    stream = tmp_path / "runs" / "exp-1" / "progress.jsonl"
    sender = send(signal.SIGTERM) if stop == "sigterm" else (lambda _: cli_stop(stream.parent))
    ended = stopped_at_step([sys.executable, str(script)], stream, sender, cwd=tmp_path)
    assert_stopped(ended, stream, reason)
    assert_checkpoint_named(stream)
    assert not (stream.parent / "final.ckpt").exists()


@pytest.mark.parametrize(
    ("stop", "reason"), [("control_file", "control_file"), ("sigint", "sigint")], ids=["trainwire-stop", "ctrl-c"]
)
def test_the_transformers_snippet_ends_a_stop_with_its_exit_code_and_checkpoint(
    tmp_path: Path, stop: str, reason: str
) -> None:
    preamble = SLOW_LOSS.format(delay=0.3)
    script = snippet_script(tmp_path, "docs/integrations.md", "## Hugging Face transformers", preamble=preamble)
    stream = tmp_path / "out" / "progress.jsonl"
    sender = send(signal.SIGINT) if stop == "sigint" else (lambda _: cli_stop(stream.parent))
    ended = stopped_at_step([sys.executable, str(script)], stream, sender, step=1, cwd=tmp_path)
    assert_stopped(ended, stream, reason)
    assert_checkpoint_named(stream)
    assert not (stream.parent / "model").exists()
