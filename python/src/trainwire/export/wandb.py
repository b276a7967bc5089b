"""The stream into offline Weights & Biases runs, which `wandb sync` uploads later.

One W&B run per trainwire run, its id the trainwire run id (`safe_name`), its name and tags
the run's (`run.started.name`, else the id): the config with
the provenance under `trainwire`, every scalar of the stream (`scalars.scalars_of`) against
the step metric `train/step` with the line's time, the notes as the run's notes, the
checkpoints and the final status in the summary, the journal files as run files. W&B's own
`_step` only grows, so the trainwire step is a metric of its own: a restarted attempt's
steps stay in the history and are drawn over the old ones.

A search's trials are W&B runs of their own (`<id>-trial-<n>`, named `<name> trial <n>`),
grouped with the search's run under its id (`group`): each with its params as config, its
own steps and evaluations, its `trial.ended` metrics (`trial/<metric>`) and status in its
summary, ended as the trial did (failed: exit code 1).

Nothing is sent: each batch of an export (`batch_events`) writes, for every run with new
lines, one offline run directory `<dir>/wandb/offline-run-<time>-<id>`, finished at the
batch's end; `wandb sync` uploads the directories of a run one after the other, in the order
they were written.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import wandb

from trainwire._generated.contract import NOT_FINISHED_EXIT_CODE
from trainwire.export.dispatch import NotExported, handler_of
from trainwire.export.journal import copy_journal
from trainwire.export.journal_copies import DEFAULT_COPY_CAP
from trainwire.export.naming import RunNaming, journal_naming, started_naming
from trainwire.export.scalars import safe_name, scalar_step, scalars_of, timestamp_s, trial_scalars
from trainwire.journal.notes import read_notes

__all__ = ["EVENT_HANDLERS", "JOURNAL_FILES_DIR", "STEP_METRIC", "WandbExporter", "wandb_exit_code", "wandb_tags"]

#: the metric every other scalar is drawn against
STEP_METRIC = "train/step"
#: W&B refuses a tag longer than this (or empty)
WANDB_TAG_MOST = 64
#: where the journal files go among the run's files
JOURNAL_FILES_DIR = "trainwire"
# W&B's collectors of the exporting machine (its git, code, system metrics, console) would
# describe this process, not the training run
_SETTINGS = {
    "mode": "offline",
    "silent": True,
    "console": "off",
    "save_code": False,
    "disable_git": True,
    "x_disable_stats": True,
    "x_disable_meta": True,
}


def wandb_tags(tags: tuple[str, ...]) -> list[str]:
    """The run's tags as W&B takes them: 1 to `WANDB_TAG_MOST` characters each (the contract's
    own limit today; cut, should it ever allow more), once each."""
    return list(dict.fromkeys(tag[:WANDB_TAG_MOST] for tag in tags if tag))


def wandb_exit_code(finished: Mapping[str, Any]) -> int:
    """The exit code W&B marks a run with: the run's own, else 0 when it succeeded or awaits
    approval and 1 otherwise (W&B shows any other code as failed)."""
    exit_code = finished.get("exit_code")
    if isinstance(exit_code, int):
        return exit_code
    return 0 if finished["status"] in ("succeeded", "awaiting_approval") else 1


class WandbExporter:
    """Writes events as offline W&B runs under `directory/wandb`; `run_dir` holds the
    stream and its journal files.

    The W&B run id follows from the trainwire run id. Exactly once: a batch is accepted once
    every offline part it opened is finished and written (`wandb.teardown`); until then the
    cursor names those parts (`state()`: `pending`, from just before each `wandb.init`), and
    an export run again removes them before it writes the batch again."""

    #: events a `write` takes; each write's parts are finished at its end, and a run's next
    #: part waits for the clock's next second
    batch_events = 5000

    def __init__(
        self,
        directory: Path,
        project: str,
        run_dir: Path,
        saved: Mapping[str, Any] | None = None,
        *,
        copy_cap: int = DEFAULT_COPY_CAP,
    ) -> None:
        self.directory = directory
        self.copy_cap = copy_cap
        self.project = project
        self.run_dir = run_dir
        self._runs: dict[str, Any] = {}
        self._trials: dict[tuple[str, int], Any] = {}  # the open W&B run of each trial
        self._naming: dict[str, RunNaming] = {}
        self._pending: list[str] = []  # the offline parts of the batch being written
        self._remember: Callable[[], None] = lambda: None
        for name in _pending_parts(saved):  # an interrupted export's parts: written again now
            shutil.rmtree(self._offline_dir / name, ignore_errors=True)

    def state(self) -> dict[str, Any]:
        return {"pending": list(self._pending)}

    def write(self, events: list[dict[str, Any]], remember: Callable[[], None] = lambda: None) -> None:
        self._remember = remember
        for event in events:
            run = self._run(event)
            if isinstance(event.get("trial"), int):
                run = self._trial_run(event)
            scalars = scalars_of(event)
            if scalars:
                run.log({**scalars, STEP_METRIC: scalar_step(event), "_timestamp": timestamp_s(event["ts"])})
            handler = handler_of(EVENT_HANDLERS, event["event"])
            if handler is not None:
                handler(self, run, event)
        self.close()  # the batch's parts finished and written: accepted
        self._pending.clear()

    @property
    def _offline_dir(self) -> Path:
        return self.directory / "wandb"

    def end_unfinished(self, run_id: str, verdict: dict[str, Any]) -> None:
        """A run that died without `run.finished`: its W&B run (and its open trials') finished
        with the code of a run that did not finish, so W&B never shows it as a success."""
        run = self._run({"run_id": run_id, "event": "verdict"})
        run.summary.update({"trainwire/status": verdict["status"], "trainwire/liveness": verdict["liveness"]})
        for key in [key for key in self._trials if key[0] == run_id]:
            self._trials.pop(key).finish(exit_code=NOT_FINISHED_EXIT_CODE)
        code = verdict.get("exit_code")  # known when the writer's journal saw the end the stream lost
        run.finish(exit_code=NOT_FINISHED_EXIT_CODE if code is None else code)
        del self._runs[run_id]

    def close(self) -> None:
        """Closes the offline runs of runs and trials still going: the next export's
        directory goes on with them (`wandb sync` uploads it as the same run, after this one)."""
        for run in [*self._trials.values(), *self._runs.values()]:
            run.finish(exit_code=0)
        self._trials.clear()
        self._runs.clear()
        wandb.teardown()  # `finish` leaves the last records to W&B's service: wait until they are written

    def _run(self, event: Mapping[str, Any]) -> Any:
        """The offline W&B run of the event's trainwire run, started on its first new line."""
        trainwire_id = event["run_id"]
        run = self._runs.get(trainwire_id)
        if run is None:
            started = event["event"] == "run.started"
            naming = self._naming_of(event)
            run = self._init(
                safe_name(trainwire_id),
                naming,
                name=naming.label(trainwire_id),
                notes=read_notes(self.run_dir, trainwire_id) or None,
                config=_config(event) if started else None,
                # a search's run is in its trials' group; known from run.started (or its trials)
                group=trainwire_id if started and "total_trials" in event else None,
            )
            self._runs[trainwire_id] = run
        return run

    def _trial_run(self, event: Mapping[str, Any]) -> Any:
        """The offline W&B run of the event's trial, started on the trial's first new line;
        its config the trial's params when that line is `trial.started`."""
        trainwire_id, trial = event["run_id"], event["trial"]
        run = self._trials.get((trainwire_id, trial))
        if run is None:
            naming = self._naming_of(event)
            params = dict(event.get("params") or {}) if event["event"] == "trial.started" else {}
            run = self._init(
                safe_name(f"{trainwire_id}-trial-{trial}"),
                naming,
                name=f"{naming.label(trainwire_id)} trial {trial}",
                config={**params, "trainwire": {"run_id": trainwire_id, "trial": trial}},
                group=trainwire_id,
            )
            self._trials[(trainwire_id, trial)] = run
        return run

    def _naming_of(self, event: Mapping[str, Any]) -> RunNaming:
        """The name and tags of the event's run: its `run.started`'s, or its journal's."""
        trainwire_id = event["run_id"]
        if event["event"] == "run.started":
            self._naming[trainwire_id] = started_naming(event)
        elif trainwire_id not in self._naming:
            self._naming[trainwire_id] = journal_naming(self.run_dir, trainwire_id)
        return self._naming[trainwire_id]

    def _init(self, wandb_id: str, naming: RunNaming, **options: Any) -> Any:
        """A new offline W&B run `wandb_id` with the run's tags, its scalars against `STEP_METRIC`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._wait_for_a_free_second(wandb_id)
        # named in the cursor before W&B makes it: the second it will be named after is now or soon
        now = datetime.now()
        self._pending.extend(_part_name(now + timedelta(seconds=ahead), wandb_id) for ahead in range(3))
        self._remember()
        run = wandb.init(
            dir=self.directory,
            project=self.project,
            id=wandb_id,
            tags=wandb_tags(naming.tags) or None,
            reinit="create_new",  # one W&B run per trainwire run (and trial) of the stream, side by side
            settings=wandb.Settings(**_SETTINGS),
            **options,
        )
        run.define_metric(STEP_METRIC)
        run.define_metric("*", step_metric=STEP_METRIC)
        del self._pending[-3:]
        self._pending.append(Path(run.dir).parent.name)
        self._remember()
        return run

    # -- the handlers of EVENT_HANDLERS: after the event's scalars, into its (trial's) run -----

    def _restarted(self, run: Any, event: Mapping[str, Any]) -> None:
        run.summary["trainwire/attempt"] = event["attempt"]

    def _checkpoint(self, run: Any, event: Mapping[str, Any]) -> None:
        run.summary["trainwire/checkpoint"] = {"step": event["step"], "path": event["path"]}

    def _end_trial(self, run: Any, event: Mapping[str, Any]) -> None:
        """The trial's outcome in its run's summary, and its run finished as the trial ended."""
        run.summary.update({**trial_scalars(event), "trainwire/status": event["status"]})
        error = event.get("error") or {}
        if error:
            run.summary["trainwire/error"] = f"{error.get('type')}: {error.get('message')}"
        run.finish(exit_code=1 if event["status"] == "failed" else 0)
        del self._trials[(event["run_id"], event["trial"])]

    def _wait_for_a_free_second(self, wandb_id: str) -> None:
        """W&B names an offline run's directory after the second `wandb.init` runs in: a
        later part of the same run started within that second would write into the earlier
        part's directory, so wait for the clock to leave it."""
        while (self._offline_dir / _part_name(datetime.now(), wandb_id)).exists():
            time.sleep(0.05)

    def _finish(self, run: Any, event: Mapping[str, Any]) -> None:
        trainwire_id = event["run_id"]
        notes = read_notes(self.run_dir, trainwire_id)
        if notes:
            run.notes = notes  # as they are at the end
        run.summary["trainwire/status"] = event["status"]
        if event.get("reason"):
            run.summary["trainwire/reason"] = event["reason"]
        error = event.get("error") or {}
        if error:
            run.summary["trainwire/error"] = f"{error.get('type')}: {error.get('message')}"
        if event.get("checkpoint"):
            run.summary["trainwire/checkpoint"] = {"step": event.get("step"), "path": event["checkpoint"]}
        # checked copies, not W&B's link to the file: the offline run keeps what the journal held now
        for copy in copy_journal(self.run_dir, trainwire_id, Path(run.dir) / JOURNAL_FILES_DIR, self.copy_cap):
            run.save(str(copy), base_path=run.dir, policy="now")
        run.finish(exit_code=wandb_exit_code(event))
        del self._runs[trainwire_id]


def _part_name(at: datetime, wandb_id: str) -> str:
    """The directory W&B makes for an offline run started at `at`."""
    return f"offline-run-{at:%Y%m%d_%H%M%S}-{wandb_id}"


#: an offline part's name: the only names a cursor may have removed
_PART_NAME = re.compile(r"offline-run-[0-9]{8}_[0-9]{6}-[A-Za-z0-9._-]+")


def _pending_parts(saved: Mapping[str, Any] | None) -> list[str]:
    """The parts an interrupted export left unfinished: names of offline run directories only,
    never a path (a cursor in a shared folder must not get anything else removed)."""
    pending = saved.get("pending") if saved else None
    if not isinstance(pending, list):
        return []
    return [name for name in pending if isinstance(name, str) and _PART_NAME.fullmatch(name) and ".." not in name]


def _config(started: Mapping[str, Any]) -> dict[str, Any]:
    config = dict(started.get("config") or {})
    config["trainwire"] = {
        "run_id": started["run_id"],
        "provenance": started.get("provenance") or {},
        "producer": started.get("producer") or {},
        "resumed_from": started.get("resumed_from"),
    }
    return config


#: every tracker event (`TRACKER_EVENTS`, each event schema's `x-trainwire-tracker-event`) -> what the
#: exporter writes of it beyond its scalars; any other event gives its scalars only (a test holds the keys)
EVENT_HANDLERS: dict[str, Callable[[WandbExporter, Any, Mapping[str, Any]], None] | NotExported] = {
    "run.started": NotExported("its config, name and tags open the W&B run, as any first line of a run does"),
    "train.restarted": WandbExporter._restarted,
    "checkpoint.saved": WandbExporter._checkpoint,
    "trial.started": NotExported("its params open the trial's W&B run, as its config"),
    "trial.ended": WandbExporter._end_trial,
    "run.finished": WandbExporter._finish,
}
