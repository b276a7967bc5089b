"""Where a resumed transformers run came from: the `trainwire.json` written into every
checkpoint directory on save, and read back (with the `checkpoint-N` name) on resume."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import Trainer

__all__ = ["CHECKPOINT_ORIGIN_FILE", "checkpoint_origin", "resolve_checkpoint", "write_checkpoint_origin"]

# the integration's logger: its warnings are configured (and filtered) under one name
logger = logging.getLogger("trainwire.integrations.transformers")

#: written into every checkpoint directory so that a resumed run knows where it came from
CHECKPOINT_ORIGIN_FILE = "trainwire.json"
_CHECKPOINT_DIR = re.compile(r"^checkpoint-(\d+)$")


def checkpoint_origin(checkpoint_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The `run.started.resumed_from` object for a resume from `checkpoint_dir`.

    The run id comes from the `trainwire.json` this integration writes on save (null when
    absent); the step from that file or the directory's `checkpoint-N` name. The run makes
    the checkpoint path relative to its output directory.
    """
    directory = Path(checkpoint_dir).absolute()
    origin: dict[str, Any] = {}
    try:
        loaded = json.loads((directory / CHECKPOINT_ORIGIN_FILE).read_text(encoding="utf-8"))
        origin = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        pass
    step = origin.get("step")
    if not isinstance(step, int):
        match = _CHECKPOINT_DIR.match(directory.name)
        step = int(match.group(1)) if match else None
    run_id = origin.get("run_id")
    return {"run_id": run_id if isinstance(run_id, str) else None, "checkpoint": str(directory), "step": step}


def write_checkpoint_origin(directory: Path, run_id: str, step: int) -> None:
    """Records the run and step in a saved checkpoint directory (a warning when it cannot)."""
    if not directory.is_dir():
        return
    try:
        (directory / CHECKPOINT_ORIGIN_FILE).write_text(json.dumps({"run_id": run_id, "step": step}), encoding="utf-8")
    except OSError as error:
        logger.warning("could not write %s into %s: %s", CHECKPOINT_ORIGIN_FILE, directory, error)


def resolve_checkpoint(trainer: Trainer, resume_from_checkpoint: str | bool | None) -> str | None:
    """The checkpoint `trainer.train(resume_from_checkpoint=...)` resumes from, or None."""
    if resume_from_checkpoint is True:
        from transformers.trainer_utils import get_last_checkpoint

        last: str | None = get_last_checkpoint(trainer.args.output_dir)
        return last
    return str(resume_from_checkpoint) if resume_from_checkpoint else None
