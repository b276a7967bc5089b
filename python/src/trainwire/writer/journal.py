"""The journal of one run beside the stream (`runs/<run_id>/`, see docs/journal.md): the
resolved config, its diff against a reference run, the dirty diff, the environment record,
a notes file, the summary, the steps the throttle left out and a snapshot of the series.
The stream stays the source of truth: `trainwire journal rebuild` runs the same fold
(`journal.fold`) over it and the step file."""

from __future__ import annotations

import fnmatch
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.clock import format_ts
from trainwire.contract.files import write_json_atomically, write_text_atomically
from trainwire.contract.layout import (
    CONFIG_FILE,
    DIFF_FILE,
    ENVIRONMENT_FILE,
    NOTES_FILE,
    STREAM_FILE,
    SUMMARY_FILE,
    journal_dirs,
    run_journal_dir,
)
from trainwire.journal.files import MAX_SUMMARY_BYTES, read_journal_json
from trainwire.journal.fold import RunJournalFold
from trainwire.journal.migration import migrate_journal
from trainwire.journal.notes import NOTES_TEMPLATE
from trainwire.journal.step_records import kept_step
from trainwire.writer.config_reference import write_config_diff
from trainwire.writer.journal_folder import JournalFolder, NotWritten
from trainwire.writer.provenance import run_git
from trainwire.writer.redaction import redact_text

__all__ = ["DIFF_LIMIT_BYTES", "SECRET_FILE_PATTERNS", "Journal", "dirty_diff"]

logger = logging.getLogger("trainwire.writer.journal")

#: a larger diff is cut at a line boundary, with a note saying how much was left out
DIFF_LIMIT_BYTES = 1 << 20
#: the longest a kept step waits for the step file (shorter when the step interval is)
KEPT_STEP_BOUND_S = 1.0
#: seconds between two saves of the summary and the series snapshot while the run goes on
SAVE_INTERVAL_S = 30.0
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
    """Writes the journal of run `run_id` streamed into `directory`; a sink of the run.

    `begin()` is called by the run before `run.started`: it writes the config (and its diff
    against `config_reference`), the notes file, the environment record and the dirty diff,
    and returns the diff's reference for the provenance. As a sink it costs the training
    thread a few attribute reads a line: the summary, the series, the run's state and view
    events are folded from the files the run wrote (`JournalFolder`), on a thread of their
    own, whenever `summary.json` and `series.json` are saved: when the run starts, when a
    trial ends, every `SAVE_INTERVAL_S` and when it finishes. The steps the throttle left out (`keep_step`)
    go to the step file in batches from that thread too. A failure is logged and never
    reaches training.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        run_id: str,
        *,
        stream: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        config_reference: str | os.PathLike[str] | None = None,
        step_interval_s: float = 1.0,
    ) -> None:
        self.directory = Path(directory)
        self.run_id = run_id
        self.journal_dir = run_journal_dir(directory, run_id)
        self._stream = Path(stream) if stream is not None else self.directory / STREAM_FILE
        self._cwd = cwd
        self._config_reference = config_reference
        try:
            migrate_journal(self.directory)
        except OSError:
            logger.warning("trainwire: the 0.1 journal in %s could not be moved", self.directory, exc_info=True)
        fold = RunJournalFold(run_id, _earlier_runs(self.directory, run_id))
        self._not_written = NotWritten(self.journal_dir)
        # the run's lines start where the stream ends now: it writes nothing before run.started
        # a kept step waits at most half the bound once kept: it was logged less than a step
        # interval before the step that replaced it in the throttle
        bound_s = (min(KEPT_STEP_BOUND_S, step_interval_s) if step_interval_s > 0 else KEPT_STEP_BOUND_S) / 2
        start = _size(self._stream) or 0
        self._folder = JournalFolder(self._stream, start, self.journal_dir, fold, self._not_written, bound_s=bound_s)
        self._last_seq = 0
        self._saved_at = time.monotonic()
        #: the stream part of the run's completeness (None while nothing was lost), set by the run
        self.stream_completeness: Callable[[], dict[str, Any] | None] = lambda: None

    def begin(self, config: Mapping[str, Any] | None, provenance: Mapping[str, Any] | None) -> dict[str, str] | None:
        """Writes the config, its diff, the notes and the environment record, and the diff when
        the tree is dirty; returns `{path, sha256}` of the diff, or None."""
        diff = None
        try:
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            if config is not None:
                write_json_atomically(self.journal_dir / CONFIG_FILE, config, indent=2)
                if self._config_reference is not None:
                    write_config_diff(self.journal_dir, config, self._config_reference)
            notes = self.journal_dir / NOTES_FILE
            if not notes.exists():
                write_text_atomically(notes, NOTES_TEMPLATE)
            if provenance is not None and provenance.get("git_dirty") is True:
                diff = self._write_diff()
            if provenance is not None:
                environment = {**provenance, "dirty_diff": diff} if diff is not None else dict(provenance)
                write_json_atomically(self.journal_dir / ENVIRONMENT_FILE, environment, indent=2)
        except Exception as error:
            self._not_written("the journal", error)
        return diff

    def _write_diff(self) -> dict[str, str] | None:
        text = dirty_diff(self._cwd, outputs=self.directory)
        if text is None:
            return None
        data = text.encode("utf-8")
        write_text_atomically(self.journal_dir / DIFF_FILE, text)
        import hashlib  # deferred: OpenSSL, for a dirty tree only

        path = (self.journal_dir / DIFF_FILE).relative_to(self.directory).as_posix()
        return {"path": path, "sha256": hashlib.sha256(data).hexdigest()}

    # -- the sink ---------------------------------------------------------------------------

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        self._last_seq = event["seq"]
        kind = event["event"]
        if kind == "train.step":
            self._folder.steps_logged += 1
        if kind == "run.started" or kind == "run.finished":
            self._folder.run_ends.append(dict(event))
            self._save(now=True)
        elif kind == "trial.ended" or time.monotonic() - self._saved_at >= SAVE_INTERVAL_S:
            # a search's best changes when a trial ends: a run killed later still tells it
            self._save(now=False)

    def keep_step(self, line: Mapping[str, Any], reported_at: float) -> None:
        """Keeps a `train.step` line the throttle left out of the stream (it came after the
        last line written), with the time it was reported as its `ts`."""
        folder = self._folder
        folder.steps_logged += 1
        folder.keep(kept_step(line, self._last_seq, format_ts(reported_at)))

    def append_kept_now(self) -> None:
        """Puts every step kept so far into the step file before returning (unless the
        journal's thread hangs): called before the run's last line, so a reader that sees the
        run ended finds all its steps there."""
        try:
            self._folder.settle()
        except Exception as error:
            self._not_written("the step file", error)

    def _save(self, *, now: bool) -> None:
        """Saves the summary and the snapshot up to the line just written (the stream holds
        it): at once on this thread when `now`, else on the folding thread."""
        self._saved_at = time.monotonic()
        self._folder.stream_loss = self.stream_completeness()
        try:
            size = os.stat(self._stream).st_size
            if now:
                self._folder.save_now(size)
            else:
                self._folder.request_save(size)
        except Exception as error:
            self._not_written("the journal", error)

    def close(self) -> None:
        self._folder.stream_loss = self.stream_completeness()
        try:
            self._folder.close(_size(self._stream) or 0)
        except Exception as error:
            self._not_written("the journal", error)


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def dirty_diff(
    cwd: str | os.PathLike[str] | None = None,
    limit_bytes: int = DIFF_LIMIT_BYTES,
    *,
    outputs: str | os.PathLike[str] | None = None,
) -> str | None:
    """The uncommitted changes to tracked files (`git diff HEAD`) and the untracked text files
    that fit, secrets masked, files that look like secrets left out, cut to `limit_bytes`;
    None outside a work tree."""
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
    header_untracked, untracked = _untracked(cwd, limit_bytes, outputs)
    return _cut(header + header_untracked + body + untracked, limit_bytes)


def _untracked(
    cwd: str | os.PathLike[str] | None, limit_bytes: int, outputs: str | os.PathLike[str] | None
) -> tuple[str, str]:
    """Untracked files (not ignored) as new-file diffs, secrets masked: text files while they
    fit in `limit_bytes`; the others named in the header. Files under `outputs` (the run's
    own output directory) are not the code: left out."""
    listed = run_git(["ls-files", "--others", "--exclude-standard", "-z"], cwd)
    if listed is None or listed.returncode != 0:
        return "", ""
    header, body, size = "", "", 0
    base = Path(cwd if cwd is not None else os.getcwd())
    skip = os.path.realpath(outputs) if outputs is not None else None
    for name in (name for name in listed.stdout.split("\0") if name):
        if skip is not None and os.path.realpath(base / name).startswith(skip + os.sep):
            continue
        if _looks_secret(name):
            header += f"# trainwire: left out (the name looks like a secret): {name}\n"
            continue
        # `git diff --no-index` exits 1 when the files differ: that is its answer, not a failure
        diff = run_git(["diff", "--no-index", "--no-color", "--no-ext-diff", "--", os.devnull, name], cwd)
        text = diff.stdout if diff is not None and diff.returncode in (0, 1) else ""
        if not text or "Binary files" in text.splitlines()[-1] or size + len(text) > limit_bytes:
            header += f"# trainwire: untracked, not included (binary or over the size cap): {name}\n"
            continue
        size += len(text)
        body += "".join(redact_text(line) for line in text.splitlines(keepends=True))
    return header, body


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


def _earlier_runs(directory: Path, run_id: str) -> list[str]:
    """The runs of the stream before `run_id`: the latest journal's earlier runs and its own
    (the latest lists the most: it came last)."""
    latest: list[str] = []
    for journal in journal_dirs(directory):
        try:
            summary = read_journal_json(journal / SUMMARY_FILE, MAX_SUMMARY_BYTES)  # another run's: capped
            earlier = [run for run in summary.get("earlier_runs", []) if isinstance(run, str)]
            runs = [*earlier, summary["run_id"]] if isinstance(summary.get("run_id"), str) else earlier
        except (OSError, ValueError, AttributeError, TypeError):
            continue
        if len(runs) > len(latest):
            latest = runs
    return [run for run in latest if run != run_id]
