"""The run journal beside the stream: the resolved config, the dirty diff, a notes file
and the summary (see docs/journal.md). The stream stays the source of truth: the summary
is the same fold that `trainwire journal rebuild` runs over it."""

from __future__ import annotations

import fnmatch
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.files import write_json_atomically, write_text_atomically
from trainwire.contract.layout import CONFIG_FILE, DIFF_FILE, NOTES_FILE, NOTES_TEMPLATE, SUMMARY_FILE
from trainwire.lines.summary import SummaryBuilder, write_summary
from trainwire.writer.provenance import run_git
from trainwire.writer.redaction import redact_text

__all__ = ["DIFF_LIMIT_BYTES", "SECRET_FILE_PATTERNS", "Journal", "dirty_diff"]

logger = logging.getLogger("trainwire.writer.journal")

#: a larger diff is cut at a line boundary, with a note saying how much was left out
DIFF_LIMIT_BYTES = 1 << 20
#: train.step lines kept before they are folded into the summary together (a few hundred KB)
STEP_BATCH = 512
#: changed files whose name matches one of these are left out of the diff
SECRET_FILE_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials*",
    "*secret*",
    "*.kdbx",
)


class Journal:
    """Writes the journal of the runs streamed into `directory`; a sink of the run.

    `begin()` is called by the run before `run.started`: it writes the config, the notes
    file (once) and the dirty diff, and returns the diff's reference for the provenance.
    As a sink it folds every line into the summary and writes `summary.json` when the run
    starts and when it finishes. A failure is logged and never reaches training.
    """

    def __init__(self, directory: str | os.PathLike[str], *, cwd: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory)
        self._cwd = cwd
        self._summary = SummaryBuilder(_earlier_runs(self.directory / SUMMARY_FILE))
        self._steps: list[dict[str, Any]] = []

    def begin(self, config: Mapping[str, Any] | None, provenance: Mapping[str, Any] | None) -> dict[str, str] | None:
        """Writes the config and notes, and the diff when the tree is dirty; returns
        `{path, sha256}` of the diff, or None."""
        try:
            if config is not None:
                write_json_atomically(self.directory / CONFIG_FILE, config, indent=2)
            notes = self.directory / NOTES_FILE
            if not notes.exists():
                notes.write_text(NOTES_TEMPLATE, encoding="utf-8")
            if provenance is not None and provenance.get("git_dirty") is True:
                return self._write_diff()
        except Exception:
            logger.warning("trainwire: the journal in %s could not be written", self.directory, exc_info=True)
        return None

    def _write_diff(self) -> dict[str, str] | None:
        text = dirty_diff(self._cwd)
        if text is None:
            return None
        data = text.encode("utf-8")
        write_text_atomically(self.directory / DIFF_FILE, text)
        import hashlib  # deferred: OpenSSL, for a dirty tree only

        return {"path": DIFF_FILE, "sha256": hashlib.sha256(data).hexdigest()}

    # -- the sink ---------------------------------------------------------------------------

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "train.step":  # the per-step path: folded in batches (the summary is written at the run's ends)
            steps = self._steps
            steps.append(event)
            if len(steps) >= STEP_BATCH:
                self._fold_steps()
            return
        self._fold_steps()
        self._summary.add(event)
        if kind in ("run.started", "run.finished"):
            summary = self._summary.summary()
            if summary is not None:
                write_summary(self.directory, summary)

    def _fold_steps(self) -> None:
        if self._steps:
            steps, self._steps = self._steps, []
            self._summary.add_lines(steps)

    def close(self) -> None:
        self._fold_steps()


def dirty_diff(cwd: str | os.PathLike[str] | None = None, limit_bytes: int = DIFF_LIMIT_BYTES) -> str | None:
    """The uncommitted changes to tracked files (`git diff HEAD`), secrets masked, files that
    look like secrets left out, cut to `limit_bytes`; None outside a work tree."""
    names = run_git(["diff", "HEAD", "--name-only", "-z"], cwd)
    if names is None or names.returncode != 0:
        return None
    changed = [name for name in names.stdout.split("\0") if name]
    skipped = [name for name in changed if _looks_secret(name)]
    kept = [name for name in changed if name not in skipped]
    header = "".join(f"# trainwire: left out (the name looks like a secret): {name}\n" for name in skipped)
    body = ""
    if kept:
        diff = run_git(["diff", "HEAD", "--no-color", "--no-ext-diff", "--", *kept], cwd)
        if diff is None or diff.returncode != 0:
            return None
        body = "".join(redact_text(line) for line in diff.stdout.splitlines(keepends=True))
    return _cut(header + body, limit_bytes)


def _looks_secret(name: str) -> bool:
    base = name.rsplit("/", 1)[-1].lower()
    return any(fnmatch.fnmatchcase(base, pattern) for pattern in SECRET_FILE_PATTERNS)


def _cut(text: str, limit_bytes: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text
    kept = data[:limit_bytes]
    kept = kept[: kept.rfind(b"\n") + 1]
    note = f"# trainwire: cut at {len(kept)} of {len(data)} bytes\n"
    return kept.decode("utf-8", errors="ignore") + note


def _earlier_runs(summary_path: Path) -> list[str]:
    """The runs before the next one: the previous summary's earlier runs and its own."""
    try:
        previous = json.loads(summary_path.read_text(encoding="utf-8"))
        earlier = [run for run in previous.get("earlier_runs", []) if isinstance(run, str)]
        return [*earlier, previous["run_id"]] if isinstance(previous.get("run_id"), str) else earlier
    except (OSError, ValueError, AttributeError, TypeError):
        return []
