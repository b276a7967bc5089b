"""The stream into TensorBoard event files: one directory per trainwire run under the logdir.

Every scalar of the stream (`scalars.scalars_of`) at its step; text for the config, the
provenance and the run's notes (as they are when the run starts and when it ends). A
`train.restarted` writes a session start at the new attempt's first step (`step + 1`): TensorBoard then
drops the old attempt's points from that step on, so the new ones replace them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.text.summary import text_pb
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from trainwire.export.journal import read_notes
from trainwire.export.scalars import safe_name, scalar_step, scalars_of, timestamp_s

__all__ = ["TensorBoardExporter", "run_directory"]


def run_directory(logdir: Path, run_id: str) -> Path:
    """Where a trainwire run's events go: `<logdir>/<run_id>` (`:` and the like as `_`)."""
    return logdir / safe_name(run_id)


class TensorBoardExporter:
    """Writes events as TensorBoard event files under `logdir`. Each export appends new
    event files; TensorBoard reads all files of a run directory in order."""

    def __init__(self, logdir: Path, run_dir: Path) -> None:
        self.logdir = logdir
        self.run_dir = run_dir
        self._writers: dict[str, EventFileWriter] = {}

    def state(self) -> dict[str, Any]:
        return {}

    def write(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            wall_time = timestamp_s(event["ts"])
            writer = self._writer(event["run_id"])
            name = event["event"]
            if name == "run.started":
                for tag in ("config", "provenance"):
                    if event.get(tag):
                        text = f"```json\n{json.dumps(event[tag], indent=2, ensure_ascii=False, sort_keys=True)}\n```"
                        writer.add_event(Event(wall_time=wall_time, step=0, summary=text_pb(tag, text)))
            if name in ("run.started", "run.finished"):
                notes = read_notes(self.run_dir, event["run_id"])
                if notes:
                    writer.add_event(
                        Event(wall_time=wall_time, step=scalar_step(event), summary=text_pb("notes", notes))
                    )
            elif name == "train.restarted":
                restart = SessionLog(status=SessionLog.START, msg=f"attempt {event['attempt']} ({event['reason']})")
                # the attempt resumes after `step`: the old points from step + 1 on are replaced
                writer.add_event(Event(wall_time=wall_time, step=event["step"] + 1, session_log=restart))
            scalars = scalars_of(event)
            if scalars:
                values = [Summary.Value(tag=tag, simple_value=value) for tag, value in scalars.items()]
                writer.add_event(Event(wall_time=wall_time, step=scalar_step(event), summary=Summary(value=values)))
        for writer in self._writers.values():
            writer.flush()

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()

    def _writer(self, run_id: str) -> EventFileWriter:
        # made on a run's first new event: an export with nothing new leaves no empty file
        writer = self._writers.get(run_id)
        if writer is None:
            directory = run_directory(self.logdir, run_id)
            directory.mkdir(parents=True, exist_ok=True)
            writer = self._writers[run_id] = EventFileWriter(str(directory))
        return writer
