"""The directories a search for runs walks (`trainwire runs`, `trainwire serve`): every one
below a root, in a stable order, except the copies a tracker keeps of a stream.

`trainwire export mlflow` logs the stream as an artifact of the MLflow run, which MLflow
stores as `<artifact root>/<experiment id>/<MLflow run id>/artifacts/trainwire/progress.jsonl`:
under a file store's `mlruns/`, a server's (or trainwire's, beside a SQLite store)
`mlartifacts/`, or whatever `--artifact-location` named. The layout is MLflow's own, whatever
the root is called: an `artifacts` directory inside a directory named like an MLflow run id
(32 lower-case hexadecimal digits, a UUID4's hex). Such a copy is the same run again, not
one of its own, so the walk does not enter it. A root given explicitly is walked whatever
it is: the rule applies to the directories found below it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

__all__ = ["is_tracker_copy", "walk_run_directories"]

#: the name MLflow gives a run's directory in its artifact store (`uuid.uuid4().hex`)
_MLFLOW_RUN_ID = re.compile(r"[0-9a-f]{32}")
#: the directory of an MLflow run holding its artifacts
_MLFLOW_ARTIFACTS = "artifacts"


def is_tracker_copy(parent: str | os.PathLike[str], name: str) -> bool:
    """Whether the directory `name` inside `parent` holds a tracker's copies of streams."""
    return name == _MLFLOW_ARTIFACTS and _MLFLOW_RUN_ID.fullmatch(os.path.basename(parent)) is not None


def walk_run_directories(root: str | os.PathLike[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(root)` with the subdirectories sorted and the trackers' copies left out; a
    caller may prune `subdirectories` further, as with `os.walk`."""
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(name for name in subdirectories if not is_tracker_copy(directory, name))
        yield directory, subdirectories, files
