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
from typing import NamedTuple

__all__ = ["Entries", "WalkedDirectory", "directory_entries", "is_tracker_copy", "walk_run_directories"]

#: the name MLflow gives a run's directory in its artifact store (`uuid.uuid4().hex`)
_MLFLOW_RUN_ID = re.compile(r"[0-9a-f]{32}")
#: the directory of an MLflow run holding its artifacts
_MLFLOW_ARTIFACTS = "artifacts"


def is_tracker_copy(parent: str | os.PathLike[str], name: str) -> bool:
    """Whether the directory `name` inside `parent` holds a tracker's copies of streams."""
    return name == _MLFLOW_ARTIFACTS and _MLFLOW_RUN_ID.fullmatch(os.path.basename(parent)) is not None


class WalkedDirectory(NamedTuple):
    """One directory of a walk: its path, the subdirectories the walk goes into next (sorted,
    the trackers' copies left out: remove names to skip them), the links to directories it
    holds (never walked into) and its other names."""

    path: str
    subdirectories: list[str]
    links: list[str]
    files: list[str]


#: a directory's entries, one `scandir`: (subdirectories, links to directories, other names)
Entries = tuple[list[str], list[str], list[str]]


def walk_run_directories(
    root: str | os.PathLike[str], listed: dict[str, Entries] | None = None
) -> Iterator[WalkedDirectory]:
    """Every directory below `root`, `root` first, top-down as `os.walk` goes (links to
    directories not followed, a directory that cannot be listed skipped), one `scandir` a
    directory. `listed`: directories the caller has listed meanwhile (`directory_entries`), by
    path: the walk takes (and drops) their entries instead of listing them again."""
    pending = [os.fspath(root)]
    known = {} if listed is None else listed
    while pending:
        directory = pending.pop()
        entries = known.pop(directory, None) or directory_entries(directory)
        if entries is None:
            continue
        walked, links, files = entries
        subdirectories = sorted(name for name in walked if not is_tracker_copy(directory, name))
        yield WalkedDirectory(directory, subdirectories, sorted(links), files)
        pending.extend(os.path.join(directory, name) for name in reversed(subdirectories))


def directory_entries(directory: str) -> Entries | None:
    """The entries of `directory` as a walk sorts them (a link to a directory is one, not a
    subdirectory), or None when it cannot be listed."""
    walked: list[str] = []
    links: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(directory) as scan:
            for entry in scan:
                try:
                    is_directory = entry.is_dir()
                except OSError:
                    is_directory = False
                if not is_directory:
                    files.append(entry.name)
                elif entry.is_symlink():
                    links.append(entry.name)
                else:
                    walked.append(entry.name)
    except OSError:
        return None
    return walked, links, files
