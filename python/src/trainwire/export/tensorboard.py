"""The stream into TensorBoard event files: one directory per trainwire run under the logdir.

Every scalar of the stream (`scalars.scalars_of`) at its step; text for the run's name and
tags (`name`, when it has either), the config, the provenance and the run's notes (as they are when the run starts and when it ends). A
`train.restarted` writes a session start at the new attempt's first step (`step + 1`): TensorBoard then
drops the old attempt's points from that step on, so the new ones replace them.

A search's trials are sessions of TensorBoard's HParams view: each trial's lines go to
`<logdir>/<run_id>/trial-<n>`, which opens with the trial's params (the plugin's session
start) and closes with its outcome (`trial/<metric>` scalars, the session's end status).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2
from tensorboard.plugins.hparams.summary_v2 import hparams_pb
from tensorboard.plugins.text.summary import text_pb
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from trainwire.contract.files import inside
from trainwire.export.dispatch import NO_COUNTERPART, NotExported, handler_of
from trainwire.export.naming import RunNaming, started_naming
from trainwire.export.scalars import safe_name, scalar_step, scalars_of, timestamp_s, trial_scalars
from trainwire.journal.notes import read_notes

__all__ = ["EVENT_HANDLERS", "SESSION_STATUS", "TensorBoardExporter", "run_directory", "trial_directory"]

#: the HParams session status each `trial.ended` status ends with
SESSION_STATUS = {
    "succeeded": api_pb2.STATUS_SUCCESS,
    "failed": api_pb2.STATUS_FAILURE,
    "pruned": api_pb2.STATUS_UNKNOWN,  # the plugin has no aborted status; pruned is not a failure
}


def run_directory(logdir: Path, run_id: str) -> Path:
    """Where a trainwire run's events go: `<logdir>/<run_id>` (`:` and the like as `_`)."""
    return logdir / safe_name(run_id)


def trial_directory(logdir: Path, run_id: str, trial: int) -> Path:
    """Where a trial's events go: `<logdir>/<run_id>/trial-<n>`, a session of the HParams view."""
    return run_directory(logdir, run_id) / f"trial-{trial}"


class TensorBoardExporter:
    """Writes events as TensorBoard event files under `logdir`. Each export appends new
    event files; TensorBoard reads all files of a run directory in order.

    Exactly once: a batch is accepted once its event files are flushed and synced to disk;
    the cursor then holds each file's size (`state()`: `files`, path -> bytes). A file made
    is recorded at its size then (its header), before an event goes into it. An export run
    again first cuts each recorded file back to its recorded size: the events an interrupted
    export wrote past its last accepted batch are gone before that batch is written again."""

    #: events a `write` takes before its files are flushed and synced
    batch_events = 1000

    def __init__(self, logdir: Path, run_dir: Path, saved: Mapping[str, Any] | None = None) -> None:
        self.logdir = logdir
        self.run_dir = run_dir
        self._writers: dict[str, EventFileWriter] = {}
        self._files: dict[str, int] = _recorded_files(saved, logdir)  # path -> the bytes accepted
        self._touched: set[str] = set()  # the files written into by the batch being written
        self._writer_files: dict[str, str] = {}  # the directory of each open writer -> its file
        self._remember: Callable[[], None] = lambda: None
        for path, size in self._files.items():
            _cut_back(Path(path), size)

    def state(self) -> dict[str, Any]:
        return {"files": dict(self._files)}

    def write(self, events: list[dict[str, Any]], remember: Callable[[], None] = lambda: None) -> None:
        self._remember = remember
        for event in events:
            wall_time = timestamp_s(event["ts"])
            trial = event.get("trial")
            writer = self._writer(event["run_id"], trial if isinstance(trial, int) else None)
            handler = handler_of(EVENT_HANDLERS, event["event"])
            if handler is not None:
                handler(self, writer, event, wall_time)
            scalars = scalars_of(event)
            if scalars:
                # asked again: a restart's handler closed the writer it was given
                writer = self._writer(event["run_id"], trial if isinstance(trial, int) else None)
                values = [Summary.Value(tag=tag, simple_value=value) for tag, value in scalars.items()]
                writer.add_event(Event(wall_time=wall_time, step=scalar_step(event), summary=Summary(value=values)))
        for writer in self._writers.values():
            writer.flush()
        for path in self._touched:  # accepted: on disk, so the cursor may say so
            self._files[path] = _synced_size(Path(path))
        self._touched = {path for directory, path in self._writer_files.items() if directory in self._writers}

    def end_unfinished(self, run_id: str, verdict: dict[str, Any]) -> None:
        """A run that died without `run.finished`: its status (`stale`) as the `status` text at
        its last line, as a finished run's ends with its notes."""
        wall_time = timestamp_s(verdict["ended_at"]) if verdict["ended_at"] else time.time()
        writer = self._writer(run_id, None)
        text = text_pb("status", f"{verdict['status']} (liveness {verdict['liveness']})")
        writer.add_event(Event(wall_time=wall_time, step=0, summary=text))
        writer.flush()

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()

    # -- the handlers of EVENT_HANDLERS: before the event's scalars, into its (trial's) writer --

    def _trial_started(self, writer: EventFileWriter, event: Mapping[str, Any], wall_time: float) -> None:
        session = hparams_pb(
            event["params"], trial_id=f"{event['run_id']}/trial-{event['trial']}", start_time_secs=wall_time
        )
        writer.add_event(Event(wall_time=wall_time, step=0, summary=session))

    def _trial_ended(self, writer: EventFileWriter, event: Mapping[str, Any], wall_time: float) -> None:
        outcome = [Summary.Value(tag=tag, simple_value=value) for tag, value in trial_scalars(event).items()]
        outcome.append(_session_end(event["status"], wall_time))
        writer.add_event(Event(wall_time=wall_time, step=0, summary=Summary(value=outcome)))

    def _started(self, writer: EventFileWriter, event: Mapping[str, Any], wall_time: float) -> None:
        naming = started_naming(event)
        if naming.name is not None or naming.tags:
            writer.add_event(Event(wall_time=wall_time, step=0, summary=text_pb("name", naming_text(naming))))
        for tag in ("config", "provenance"):
            if event.get(tag):
                text = f"```json\n{json.dumps(event[tag], indent=2, ensure_ascii=False, sort_keys=True)}\n```"
                writer.add_event(Event(wall_time=wall_time, step=0, summary=text_pb(tag, text)))
        self._notes(writer, event, wall_time)

    def _notes(self, writer: EventFileWriter, event: Mapping[str, Any], wall_time: float) -> None:
        notes = read_notes(self.run_dir, event["run_id"])
        if notes:
            writer.add_event(Event(wall_time=wall_time, step=scalar_step(event), summary=text_pb("notes", notes)))

    def _restarted(self, writer: EventFileWriter, event: Mapping[str, Any], wall_time: float) -> None:
        restart = SessionLog(status=SessionLog.START, msg=f"attempt {event['attempt']} ({event['reason']})")
        # the attempt resumes after `step`: the old points from step + 1 on are replaced
        writer.add_event(Event(wall_time=wall_time, step=event["step"] + 1, session_log=restart))
        # the new attempt goes to new files; closed, not dropped: a writer's queue is written by a
        # daemon thread, so a dropped one could lose its last events (the restart itself) at exit
        self.close()
        self._writers.clear()

    def _writer(self, run_id: str, trial: int | None) -> EventFileWriter:
        # made on a run's (or trial's) first new event: an export with nothing new leaves no empty file
        directory = run_directory(self.logdir, run_id) if trial is None else trial_directory(self.logdir, run_id, trial)
        writer = self._writers.get(str(directory))
        if writer is None:
            directory.mkdir(parents=True, exist_ok=True)
            before = set(directory.glob(_EVENT_FILES))
            writer = self._writers[str(directory)] = EventFileWriter(str(directory))  # its header flushed
            for path in set(directory.glob(_EVENT_FILES)) - before:
                self._files[str(path)] = _synced_size(path)
                self._touched.add(str(path))
                self._writer_files[str(directory)] = str(path)
            self._remember()  # recorded before an event goes in: a rerun can cut it back
        return writer


#: the files an `EventFileWriter` makes
_EVENT_FILES = "events.out.tfevents.*"


def _recorded_files(saved: Mapping[str, Any] | None, logdir: Path) -> dict[str, int]:
    """The event files a cursor records, only those this exporter can have made: a cursor in
    a shared folder must not get any other file cut back."""
    files = saved.get("files") if saved else None
    if not isinstance(files, dict):
        return {}
    return {
        path: size
        for path, size in files.items()
        if isinstance(path, str)
        and type(size) is int
        and size >= 0
        and Path(path).match(_EVENT_FILES)
        and inside(Path(path).parent, logdir)
        and not Path(path).is_symlink()
    }


def _cut_back(path: Path, size: int) -> None:
    """The event file `path` as the last accepted batch left it: what an interrupted export
    wrote past it goes (it is written again)."""
    try:
        if path.stat().st_size > size:
            os.truncate(path, size)
    except FileNotFoundError:
        pass


def _synced_size(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def naming_text(naming: RunNaming) -> str:
    """The run's name and tags as the `name` text: `lr sweep` and `tags: baseline, fp16`."""
    lines = [naming.name] if naming.name is not None else []
    return "\n\n".join([*lines, *([f"tags: {', '.join(naming.tags)}"] if naming.tags else [])])


def _session_end(status: str, end_time_s: float) -> Summary.Value:
    """The HParams plugin's session end (its `summary.session_end_pb` without TensorFlow)."""
    ended = plugin_data_pb2.SessionEndInfo(
        status=SESSION_STATUS.get(status, api_pb2.STATUS_UNKNOWN), end_time_secs=end_time_s
    )
    data = plugin_data_pb2.HParamsPluginData(session_end_info=ended)
    return Summary.Value(
        tag=metadata.SESSION_END_INFO_TAG,
        metadata=metadata.create_summary_metadata(data),
        tensor=metadata.NULL_TENSOR,
    )


#: every tracker event (`TRACKER_EVENTS`, each event schema's `x-trainwire-tracker-event`) -> what the
#: exporter writes of it beyond its scalars; any other event gives its scalars only (a test holds the keys)
EVENT_HANDLERS: dict[
    str, Callable[[TensorBoardExporter, EventFileWriter, Mapping[str, Any], float], None] | NotExported
] = {
    "run.started": TensorBoardExporter._started,
    "train.restarted": TensorBoardExporter._restarted,
    "checkpoint.saved": NO_COUNTERPART,
    "trial.started": TensorBoardExporter._trial_started,
    "trial.ended": TensorBoardExporter._trial_ended,
    "run.finished": TensorBoardExporter._notes,
}
