"""The journal of one run beside the stream (`runs/<run_id>/`, see docs/journal.md): the
resolved config, its diff against a reference run, the dirty diff, the environment record,
a notes file, the summary, the steps the throttle left out and a snapshot of the series.
The stream stays the source of truth: `trainwire journal rebuild` runs the same fold
(`lines.run_journal`) over it and the step file."""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.clock import format_ts
from trainwire.contract.files import write_json_atomically, write_text_atomically
from trainwire.contract.journal_migration import migrate_journal
from trainwire.contract.layout import (
    CONFIG_FILE,
    DIFF_FILE,
    ENVIRONMENT_FILE,
    NOTES_FILE,
    STEPS_FILE,
    STREAM_FILE,
    SUMMARY_FILE,
    journal_dirs,
    run_journal_dir,
)
from trainwire.contract.notes import NOTES_TEMPLATE, count_notes
from trainwire.lines.kept_steps import encode_kept_steps, kept_step, kept_step_line
from trainwire.lines.run_journal import RunJournalFold, write_snapshot
from trainwire.lines.state_fold import step_overwritten_by
from trainwire.lines.summary import write_summary
from trainwire.writer.config_reference import write_config_diff
from trainwire.writer.provenance import run_git
from trainwire.writer.redaction import redact_text
from trainwire.writer.sinks import reader_view

__all__ = ["DIFF_LIMIT_BYTES", "SECRET_FILE_PATTERNS", "Journal", "dirty_diff"]

logger = logging.getLogger("trainwire.writer.journal")

#: a larger diff is cut at a line boundary, with a note saying how much was left out
DIFF_LIMIT_BYTES = 1 << 20
#: train.step lines (written or kept) folded together, and kept steps appended to the step file together
STEP_BATCH = 512
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
    and returns the diff's reference for the provenance. As a sink it folds every line, and
    the steps the throttle left out (`keep_step`), into the summary and the series, and the
    written lines into the run's state and view events; it
    writes `summary.json` and `series.json` when the run starts, every `SAVE_INTERVAL_S`
    and when it finishes. A failure is logged and never reaches training.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        run_id: str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        config_reference: str | os.PathLike[str] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.run_id = run_id
        self.journal_dir = run_journal_dir(directory, run_id)
        self._cwd = cwd
        self._config_reference = config_reference
        try:
            migrate_journal(self.directory)
        except OSError:
            logger.warning("trainwire: the 0.1 journal in %s could not be moved", self.directory, exc_info=True)
        self._fold = RunJournalFold(run_id, _earlier_runs(self.directory, run_id))
        self._lines: list[dict[str, Any]] = []  # train.step lines, written or kept, not folded yet
        self._written: list[tuple[bytes, dict[str, Any]]] = []  # lines written, not folded into the state yet
        self._kept: list[dict[str, Any]] = []  # kept steps not appended to the step file yet
        self._steps_offset = 0  # bytes of the step file written
        self._last_seq = 0
        self._saved_at = time.monotonic()
        self._failed: set[str] = set()  # what could not be written, warned once each

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
        self._written.append((line, event))
        if event.get("event") == "train.step":  # the per-step path: folded in batches
            lines = self._lines
            lines.append(event)
            if len(lines) >= STEP_BATCH:
                self._fold_steps()
            return
        self._fold_pending()
        self._fold.add_lines([event])
        kind = event.get("event")
        if kind in ("run.started", "run.finished") or time.monotonic() - self._saved_at >= SAVE_INTERVAL_S:
            self._save()

    def keep_step(self, line: Mapping[str, Any], reported_at: float) -> None:
        """Keeps a `train.step` line the throttle left out of the stream (it came after the
        last line written), with the time it was reported as its `ts`."""
        record = kept_step(line, self._last_seq, format_ts(reported_at))
        self._kept.append(record)
        lines = self._lines
        lines.append(kept_step_line(record, self.run_id))
        if len(lines) >= STEP_BATCH:
            self._fold_steps()

    def _fold_steps(self) -> None:
        """A batch of steps is due: folded, and saved when the interval has passed."""
        self._fold_pending()
        if time.monotonic() - self._saved_at >= SAVE_INTERVAL_S:
            self._save()

    def _fold_pending(self) -> None:
        """Folds the steps and the stream lines waiting, and appends the kept steps; a save
        comes only after the line being written is folded too (the stream holds it)."""
        if self._lines:
            lines, self._lines = self._lines, []
            self._fold.add_lines(lines)
            self._append_kept()
        if self._written:
            written, self._written = self._written, []
            self._fold.add_stream_lines(_as_read(written))

    def _append_kept(self) -> None:
        """Appends the kept steps to the step file in one write of whole lines."""
        if not self._kept:
            return
        kept, self._kept = self._kept, []
        try:
            data = encode_kept_steps(kept)
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.journal_dir / STEPS_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                written = os.write(fd, data)
                while written < len(data):
                    written += os.write(fd, data[written:])
            finally:
                os.close(fd)
            self._steps_offset += len(data)
        except Exception as error:
            self._not_written("the step file", error)

    def _save(self) -> None:
        """Writes the summary and the series snapshot, each atomically."""
        self._saved_at = time.monotonic()
        self._fold.summary.notes = count_notes(self.journal_dir / NOTES_FILE)  # `trainwire note` may add some
        summary = self._fold.summary.summary()
        if summary is None:
            return
        try:
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            write_summary(self.journal_dir, summary)
            stream_offset = os.stat(self.directory / STREAM_FILE).st_size
            write_snapshot(self.journal_dir, self._fold.snapshot(stream_offset, self._steps_offset))
        except Exception as error:
            self._not_written("the journal", error)

    def _not_written(self, what: str, error: Exception) -> None:
        """Logs a write of the journal that failed: an `OSError` (a full disk, a read-only
        directory) in one line, at WARNING the first time per file kind; anything else, a bug,
        with its traceback."""
        if not isinstance(error, OSError):
            logger.warning("trainwire: %s in %s could not be written", what, self.journal_dir, exc_info=error)
            return
        level = logging.DEBUG if what in self._failed else logging.WARNING
        self._failed.add(what)
        logger.log(level, "trainwire: %s in %s could not be written (%s)", what, self.journal_dir, error)

    def close(self) -> None:
        self._fold_pending()
        self._append_kept()
        self._save()


def _as_read(written: list[tuple[bytes, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The written lines as a reader decodes them (a NaN loss is null there), for the state
    and the view events. A step followed by a step of the same trial leaves only its envelope
    in the state (the later step overwrites every field), so the writer's own dict serves for
    it and only the steps whose fields stay are made into a reader's view: the per-step path."""
    last = len(written) - 1
    read: list[dict[str, Any]] = []
    for index, (line, event) in enumerate(written):
        if index < last and step_overwritten_by(event, written[index + 1][1]):
            read.append(event)
        else:
            read.append(reader_view(line, event))
    return read


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
            summary = json.loads((journal / SUMMARY_FILE).read_text(encoding="utf-8"))
            earlier = [run for run in summary.get("earlier_runs", []) if isinstance(run, str)]
            runs = [*earlier, summary["run_id"]] if isinstance(summary.get("run_id"), str) else earlier
        except (OSError, ValueError, AttributeError, TypeError):
            continue
        if len(runs) > len(latest):
            latest = runs
    return [run for run in latest if run != run_id]
