"""The stream into MLflow: one MLflow run per trainwire run.

Parameters come from `run.started.config` (flattened with `.`), metrics from every scalar
of the stream (steps, epochs, evaluations, the final metrics) with their step and time, tags
from the provenance and the checkpoints, the run's name as MLflow's run name (else its id)
and its tags (`trainwire.tags`, `trainwire.tag.<tag>`), the notes as the run's description, the terminal
status from `run.finished`, and the stream and the run's journal files as artifacts once the
run ends. Names follow MLflow's rules (allowed characters, key and value lengths, batch sizes).

A search's trials are child runs of it (`mlflow.parentRunId`, named `trial <n>`): the
trial's params as parameters, its steps and evaluations as its metrics, its `trial.ended`
metrics as `trial/<metric>`, ended as the trial did (pruned as `KILLED`).
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient
from mlflow.utils.validation import (
    MAX_ENTITY_KEY_LENGTH,
    MAX_METRICS_PER_BATCH,
    MAX_PARAM_VAL_LENGTH,
    MAX_PARAMS_TAGS_PER_BATCH,
    MAX_TAG_VAL_LENGTH,
)

from trainwire.export.dispatch import NotExported, handler_of
from trainwire.export.journal import copy_journal, copy_or_report
from trainwire.export.journal_copies import DEFAULT_COPY_CAP
from trainwire.export.naming import started_naming
from trainwire.export.scalars import flatten, scalar_step, scalars_of, text_value, timestamp_s, trial_scalars
from trainwire.journal.notes import read_notes

__all__ = ["EVENT_HANDLERS", "MLFLOW_STATUS", "RUN_ID_TAG", "MlflowExporter", "default_artifact_location", "mlflow_key"]

#: MLflow's run status for each `run.finished` status (the exact one is the `trainwire.status` tag)
MLFLOW_STATUS = {
    "succeeded": "FINISHED",
    "failed": "FAILED",
    "interrupted": "KILLED",
    "reverted": "FAILED",
    "awaiting_approval": "FINISHED",
}
#: MLflow's run status for each `trial.ended` status
MLFLOW_TRIAL_STATUS = {"succeeded": "FINISHED", "failed": "FAILED", "pruned": "KILLED"}
#: MLflow's own tag that makes a run the child of another (nested in the UI)
PARENT_TAG = "mlflow.parentRunId"
#: the tag naming the trainwire run an MLflow run holds
RUN_ID_TAG = "trainwire.run_id"
ARTIFACT_DIR = "trainwire"
#: where the journal files go, inside `ARTIFACT_DIR`
JOURNAL_ARTIFACT_DIR = f"{ARTIFACT_DIR}/journal"
#: MLflow's own tag for a run's description (shown as its notes in the UI)
DESCRIPTION_TAG = "mlflow.note.content"
#: the artifact root made beside a local database store (the name MLflow's server uses)
ARTIFACTS_BESIDE_STORE = "mlartifacts"
# MLflow accepts letters, digits, `_ - . / :` and spaces in names
_NOT_ALLOWED = re.compile(r"[^\w\-./: ]", flags=re.ASCII)


def default_artifact_location(tracking_uri: str) -> str | None:
    """Where a new experiment keeps its artifacts when not told: beside a `sqlite:` store
    (`<its directory>/mlartifacts`), never the current directory, where MLflow would put
    them (`./mlruns`). None where the store already decides: a file store keeps them inside
    itself, a server (`http:`, `databricks`) has its own root.

    Raises ValueError for another database store, which has no directory to be beside."""
    scheme = urlsplit(tracking_uri).scheme.split("+")[0]
    if scheme == "sqlite":
        database = tracking_uri.split(":///", 1)[1] if ":///" in tracking_uri else ""
        if not database or database == ":memory:":
            raise ValueError(f"{tracking_uri}: a SQLite store without a file; give an artifact location")
        return (Path(database).absolute().parent / ARTIFACTS_BESIDE_STORE).as_uri()
    if scheme in ("", "file", "http", "https", "databricks", "databricks-uc", "uc"):
        return None
    raise ValueError(f"{tracking_uri}: a {scheme} store has no directory to keep artifacts beside; give one")


def mlflow_key(name: str) -> str:
    """`name` as an MLflow parameter, metric or tag key: other characters become `_`, a
    `.` or `..` between slashes becomes `_` or `__` (MLflow refuses a key that a path would
    resolve to another, such as a tag `a/../b`), and a name too long is cut, with a short
    hash so that two cut names stay apart."""
    key = _NOT_ALLOWED.sub("_", name).strip("/") or "_"
    key = re.sub(r"/{2,}", "/", key)
    key = "/".join("_" * len(part) if part in (".", "..") else part for part in key.split("/"))
    if len(key) > MAX_ENTITY_KEY_LENGTH:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        key = f"{key[: MAX_ENTITY_KEY_LENGTH - 9]}-{digest}"
    return key


class MlflowExporter:
    """Writes events through an `MlflowClient` into `experiment_id`.

    `saved` is the exporter state of an earlier export (trainwire run id -> MLflow run id);
    `copy_cap` the most bytes of the stream and of a step file sent as artifacts.

    Sent again after an interruption, a batch adds nothing: MLflow's database store keeps a
    metric once (same key, step, time and value), a tag or parameter set again is unchanged,
    and the run an interrupted export made is found by its tags, not made twice.
    """

    #: events a `write` takes: their metrics go in a few `log_batch` calls (MLflow's limit is
    #: 1000 metrics a call), each committed by the store at once
    batch_events = 200

    def __init__(
        self,
        client: MlflowClient,
        experiment_id: str,
        stream_path: Path,
        saved: Mapping[str, Any] | None = None,
        *,
        copy_cap: int = DEFAULT_COPY_CAP,
    ) -> None:
        self.client = client
        self.copy_cap = copy_cap
        self.experiment_id = experiment_id
        self.stream_path = stream_path
        self.run_dir = stream_path.parent
        self.runs: dict[str, str] = dict((saved or {}).get("runs", {}))

    def state(self) -> dict[str, Any]:
        return {"runs": dict(self.runs)}

    def close(self) -> None:
        pass

    def write(self, events: list[dict[str, Any]], remember: Callable[[], None] = lambda: None) -> None:
        """Logs `events`; returns once MLflow's store holds them (each `log_batch` returned).
        `remember` is called after a new MLflow run is made, before anything is logged to it."""
        batch = _Batch()
        for event in events:
            run_id = self._mlflow_run(event, batch, remember)
            if isinstance(event.get("trial"), int):
                run_id = self._trial_run(event, run_id, batch, remember)
            milliseconds = int(timestamp_s(event["ts"]) * 1000)
            for key, value in scalars_of(event).items():
                batch.metrics[run_id].append(Metric(mlflow_key(key), value, milliseconds, scalar_step(event)))
            handler = handler_of(EVENT_HANDLERS, event["event"])
            if handler is not None:
                handler(self, run_id, event, batch)
        self._flush(batch)

    # -- the handlers of EVENT_HANDLERS: after the event's scalars, into its (trial's) run ----

    def _started(self, run_id: str, event: Mapping[str, Any], batch: _Batch) -> None:
        batch.params[run_id].update(_params(event))
        batch.tags[run_id].update(_tags(event))
        batch.tags[run_id].update(naming_tags(event))

    def _trial_started(self, run_id: str, event: Mapping[str, Any], batch: _Batch) -> None:
        batch.params[run_id].update(_trial_params(event))
        batch.tags[run_id]["trainwire.attempt"] = str(event["attempt"])

    def _restarted(self, run_id: str, event: Mapping[str, Any], batch: _Batch) -> None:
        batch.tags[run_id]["trainwire.attempt"] = str(event["attempt"])

    def _checkpoint(self, run_id: str, event: Mapping[str, Any], batch: _Batch) -> None:
        checkpoint = text_value({"path": event["path"], "reason": event["reason"]})
        batch.tags[run_id][f"trainwire.checkpoint.{event['step']}"] = checkpoint

    def _trial_ended(self, run_id: str, event: Mapping[str, Any], batch: _Batch) -> None:
        milliseconds = int(timestamp_s(event["ts"]) * 1000)
        for key, value in trial_scalars(event).items():
            batch.metrics[run_id].append(Metric(mlflow_key(key), value, milliseconds, 0))
        self._flush(batch)
        self._end_trial(run_id, event)

    def _finished(self, run_id: str, event: Mapping[str, Any], batch: _Batch) -> None:
        self._flush(batch)
        self._finish(run_id, event)

    # -- internals ------------------------------------------------------------------------

    def _mlflow_run(self, event: Mapping[str, Any], batch: _Batch, remember: Callable[[], None]) -> str:
        """The MLflow run of the event's trainwire run, made on its first line."""
        trainwire_id = event["run_id"]
        found = self.runs.get(trainwire_id)
        if found is None:
            tags = {RUN_ID_TAG: trainwire_id, "mlflow.runName": trainwire_id, **self._description(trainwire_id)}
            found = self._made_before(tags, RUN_ID_TAG) or self._create(event, tags)
            self.runs[trainwire_id] = found
            remember()
        batch.touch(found)
        return found

    def _trial_run(self, event: Mapping[str, Any], parent: str, batch: _Batch, remember: Callable[[], None]) -> str:
        """The child run of the event's trial, made on the trial's first line."""
        key = f"{event['run_id']}#trial-{event['trial']}"
        found = self.runs.get(key)
        if found is None:
            tags = {
                "trainwire.search_run_id": event["run_id"],
                PARENT_TAG: parent,
                "mlflow.runName": f"trial {event['trial']}",
                "trainwire.trial": str(event["trial"]),
            }
            found = self._made_before(tags, "trainwire.search_run_id", "trainwire.trial") or self._create(event, tags)
            self.runs[key] = found
            remember()
        batch.touch(found)
        return found

    def _made_before(self, tags: Mapping[str, str], *keys: str) -> str | None:
        """The MLflow run an export interrupted between making it and saving its id made (its
        tags `keys` are the run's own): taken up again, never a second one."""
        # the values are run ids and trial numbers: no quote can be in them (schemas/v1/defs/run-id)
        condition = " and ".join(f"tags.`{key}` = '{tags[key]}'" for key in keys)
        found = self.client.search_runs([self.experiment_id], filter_string=condition, max_results=1)
        return found[0].info.run_id if found else None

    def _create(self, event: Mapping[str, Any], tags: Mapping[str, str]) -> str:
        start_ms = int(timestamp_s(event["ts"]) * 1000)
        run_id: str = self.client.create_run(self.experiment_id, start_time=start_ms, tags=dict(tags)).info.run_id
        return run_id

    def _end_trial(self, run_id: str, event: Mapping[str, Any]) -> None:
        tags = {"trainwire.status": event["status"]}
        error = event.get("error") or {}
        if error:
            tags["trainwire.error"] = f"{error.get('type')}: {error.get('message')}"[:MAX_TAG_VAL_LENGTH]
        self.client.log_batch(run_id, tags=[RunTag(key, value) for key, value in tags.items()])
        end_ms = int(timestamp_s(event["ts"]) * 1000)
        self.client.set_terminated(run_id, status=MLFLOW_TRIAL_STATUS.get(event["status"], "FINISHED"), end_time=end_ms)

    def _description(self, trainwire_id: str) -> dict[str, str]:
        notes = read_notes(self.run_dir, trainwire_id)
        return {DESCRIPTION_TAG: notes[:MAX_TAG_VAL_LENGTH]} if notes else {}

    def _flush(self, batch: _Batch) -> None:
        for run_id in batch.order:
            params = [Param(key, value) for key, value in batch.params[run_id].items()]
            tags = [RunTag(key, value) for key, value in batch.tags[run_id].items()]
            metrics = batch.metrics[run_id]
            for start in range(0, max(len(params), len(tags)), MAX_PARAMS_TAGS_PER_BATCH):
                self.client.log_batch(
                    run_id,
                    params=params[start : start + MAX_PARAMS_TAGS_PER_BATCH],
                    tags=tags[start : start + MAX_PARAMS_TAGS_PER_BATCH],
                )
            for start in range(0, len(metrics), MAX_METRICS_PER_BATCH):
                self.client.log_batch(run_id, metrics=metrics[start : start + MAX_METRICS_PER_BATCH])
        batch.clear()

    def end_unfinished(self, run_id: str, verdict: dict[str, Any]) -> None:
        """A run whose stream holds no `run.finished`: ended as its verdict says (the writer's
        journal knows the end of a stream that lost its last lines), else `KILLED` at its last
        line (and its open trials too), never `RUNNING` for ever."""
        end_ms = int(timestamp_s(verdict["ended_at"]) * 1000) if verdict["ended_at"] else None
        tags = {"trainwire.status": verdict["status"], "trainwire.liveness": verdict["liveness"]}
        for key, found in self.runs.items():
            if key == run_id or key.startswith(f"{run_id}#trial-"):
                self.client.log_batch(found, tags=[RunTag(name, value) for name, value in tags.items()])
                status = (
                    MLFLOW_STATUS.get(verdict["status"], MLFLOW_STATUS["interrupted"]) if key == run_id else "KILLED"
                )
                self.client.set_terminated(found, status=status, end_time=end_ms)

    def _finish(self, run_id: str, event: Mapping[str, Any]) -> None:
        trainwire_id = event["run_id"]
        tags = {"trainwire.status": event["status"], "trainwire.exit_code": str(event.get("exit_code"))}
        tags.update(self._description(trainwire_id))  # the notes as they are at the end
        if event.get("checkpoint"):
            tags["trainwire.checkpoint"] = str(event["checkpoint"])
        if event.get("reason"):
            tags["trainwire.reason"] = str(event["reason"])
        error = event.get("error") or {}
        if error:
            tags["trainwire.error"] = f"{error.get('type')}: {error.get('message')}"[:MAX_TAG_VAL_LENGTH]
        self.client.log_batch(run_id, tags=[RunTag(key, value) for key, value in tags.items()])
        with tempfile.TemporaryDirectory(prefix="trainwire-export-") as staging:
            # MLflow uploads what it is given: checked copies, never the files found
            stream = copy_or_report(self.stream_path, Path(staging) / self.stream_path.name, self.copy_cap)
            if stream is not None:
                self.client.log_artifact(run_id, str(stream), artifact_path=ARTIFACT_DIR)
            for path in copy_journal(self.run_dir, trainwire_id, Path(staging) / "journal", self.copy_cap):
                self.client.log_artifact(run_id, str(path), artifact_path=JOURNAL_ARTIFACT_DIR)
        end_ms = int(timestamp_s(event["ts"]) * 1000)
        self.client.set_terminated(run_id, status=MLFLOW_STATUS.get(event["status"], "FINISHED"), end_time=end_ms)


class _Batch:
    """Params, tags and metrics gathered per MLflow run before one `log_batch`."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.params: dict[str, dict[str, str]] = {}
        self.tags: dict[str, dict[str, str]] = {}
        self.metrics: dict[str, list[Metric]] = {}

    def touch(self, run_id: str) -> None:
        if run_id not in self.params:
            self.order.append(run_id)
            self.params[run_id], self.tags[run_id], self.metrics[run_id] = {}, {}, []

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]


def _params(started: Mapping[str, Any]) -> dict[str, str]:
    params: dict[str, str] = {}
    for name, value in flatten(started.get("config") or {}).items():
        params.setdefault(mlflow_key(name), text_value(value)[:MAX_PARAM_VAL_LENGTH])
    return params


def _trial_params(started: Mapping[str, Any]) -> dict[str, str]:
    return {
        mlflow_key(name): text_value(value)[:MAX_PARAM_VAL_LENGTH]
        for name, value in flatten(started.get("params") or {}).items()
    }


def naming_tags(started: Mapping[str, Any]) -> dict[str, str]:
    """The run's name as MLflow's run name, its tags as `trainwire.tags` (as listed) and one
    `trainwire.tag.<tag>` each (`tags."trainwire.tag.baseline" = 'true'` finds them)."""
    naming = started_naming(started)
    tags: dict[str, str] = {}
    if naming.name is not None:
        tags["mlflow.runName"] = naming.name[:MAX_TAG_VAL_LENGTH]
    if naming.tags:
        tags["trainwire.tags"] = ", ".join(naming.tags)[:MAX_TAG_VAL_LENGTH]
        tags.update({mlflow_key(f"trainwire.tag.{tag}"): "true" for tag in naming.tags})
    return tags


def _tags(started: Mapping[str, Any]) -> dict[str, str]:
    provenance = started.get("provenance") or {}
    tags = {
        mlflow_key(f"trainwire.provenance.{name}"): text_value(value)[:MAX_TAG_VAL_LENGTH]
        for name, value in flatten(provenance).items()
    }
    producer = started.get("producer") or {}
    tags["trainwire.producer"] = f"{producer.get('name')} {producer.get('version')}"
    if provenance.get("git_sha"):
        tags["mlflow.source.git.commit"] = provenance["git_sha"]  # MLflow's own tag: the UI links it
    resumed = started.get("resumed_from") or {}
    if resumed.get("run_id"):
        tags["trainwire.resumed_from"] = str(resumed["run_id"])
    return tags


#: every tracker event (`TRACKER_EVENTS`, each event schema's `x-trainwire-tracker-event`) -> what the
#: exporter writes of it beyond its scalars; any other event gives its scalars only (a test holds the keys)
EVENT_HANDLERS: dict[str, Callable[[MlflowExporter, str, Mapping[str, Any], _Batch], None] | NotExported] = {
    "run.started": MlflowExporter._started,
    "train.restarted": MlflowExporter._restarted,
    "checkpoint.saved": MlflowExporter._checkpoint,
    "trial.started": MlflowExporter._trial_started,
    "trial.ended": MlflowExporter._trial_ended,
    "run.finished": MlflowExporter._finished,
}
