"""`trainwire export mlflow|tensorboard|wandb RUN`: the stream into a tracker, once or with --follow,
every step the trainer logged (the throttled ones from the run's journal, `export.sync`).

Each export remembers where it stopped in a cursor file, so running it again writes only
what is new. The trackers' libraries are imported only when their command runs.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from trainwire._generated.contract import NOT_FINISHED_EXIT_CODE
from trainwire.cli.arguments import positive_seconds
from trainwire.cli.errors import CommandError
from trainwire.cli.table import safe
from trainwire.contract.layout import STREAM_FILE, stream_path

__all__ = ["add_export_commands"]

CURSOR_DIR = ".trainwire-export"


def add_export_commands(commands: Any) -> None:
    """Registers `export` and its tracker subcommands on the CLI's subparsers."""
    export = commands.add_parser(
        "export",
        help="copy a stream into MLflow, TensorBoard or Weights & Biases, once or live",
        description="Copy a run's stream into a tracker, with every step the trainer logged (the steps the "
        "stream's throttle left out come from the run's journal). Running it again adds only what is new.",
    )
    trackers = export.add_subparsers(title="trackers", metavar="TRACKER", required=True)

    mlflow = trackers.add_parser(
        "mlflow",
        help="one MLflow run per trainwire run",
        description="Parameters, every metric of every logged step, provenance and checkpoint tags, the notes, the final status, "
        "the stream and the journal files into MLflow.",
    )
    _common(mlflow)
    mlflow.add_argument(
        "--tracking-uri",
        metavar="URI",
        help="the MLflow tracking URI (default: MLflow's own, e.g. MLFLOW_TRACKING_URI)",
    )
    mlflow.add_argument(
        "--experiment",
        metavar="NAME",
        default="trainwire",
        help="the experiment, created when missing (default trainwire)",
    )
    mlflow.add_argument(
        "--artifact-location",
        metavar="URI",
        help="where a newly created experiment keeps its artifacts "
        "(default: beside a sqlite: store, DIR/mlartifacts; a file store or a server keeps its own)",
    )
    mlflow.set_defaults(command=_export_mlflow)

    tensorboard = trackers.add_parser(
        "tensorboard",
        help="TensorBoard event files, one directory per run",
        description="Every scalar of every logged step, the config, the provenance and the notes as TensorBoard event files "
        "under DIR/<run_id>.",
    )
    _common(tensorboard)
    tensorboard.add_argument("--logdir", type=Path, metavar="DIR", required=True, help="TensorBoard's log directory")
    tensorboard.set_defaults(command=_export_tensorboard)

    wandb = trackers.add_parser(
        "wandb",
        help="an offline Weights & Biases run per trainwire run, for `wandb sync`",
        description="Config, every scalar of every logged step, the notes, checkpoints and the final status as offline W&B runs "
        "under DIR/wandb; `wandb sync DIR/wandb` uploads them. Nothing is sent from here.",
    )
    _common(wandb)
    wandb.add_argument(
        "--dir",
        type=Path,
        metavar="DIR",
        help="where the offline runs go, as DIR/wandb/offline-run-* (default: the run's directory)",
    )
    wandb.add_argument("--project", metavar="NAME", default="trainwire", help="the W&B project (default trainwire)")
    wandb.set_defaults(command=_export_wandb)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run", type=Path, metavar="RUN", help=f"a stream file, or a run's output directory (its {STREAM_FILE})"
    )
    parser.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="keep the tracker in sync until every run in the stream has finished",
    )
    parser.add_argument(
        "--poll",
        type=positive_seconds,
        default=0.5,
        metavar="S",
        help="seconds between polls with --follow (default 0.5)",
    )
    parser.add_argument(
        "--cursor",
        type=Path,
        metavar="FILE",
        help="where the export remembers its position (default: see docs/integrations.md)",
    )


def _export_mlflow(options: argparse.Namespace) -> int:
    stream = stream_path(options.run)
    try:
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient, get_tracking_uri

        from trainwire.export.mlflow import MlflowExporter, default_artifact_location
    except ImportError as error:
        raise CommandError(f"export mlflow needs MLflow: pip install 'trainwire[mlflow]' ({error})") from None
    uri = options.tracking_uri or get_tracking_uri()  # MLflow's default when not given
    destination = hashlib.sha256(f"{uri}\n{options.experiment}".encode()).hexdigest()[:12]
    cursor = options.cursor or stream.parent / CURSOR_DIR / f"{stream.name}.mlflow-{destination}.json"
    try:
        client = MlflowClient(tracking_uri=uri)
        experiment = client.get_experiment_by_name(options.experiment)
    except MlflowException as error:  # the store refused (a file store MLflow no longer opens, a server down)
        raise CommandError(f"export mlflow: the tracking store {uri} cannot be opened: {error.message}") from None
    if experiment is not None:
        experiment_id = experiment.experiment_id
    else:
        try:
            location = options.artifact_location or default_artifact_location(uri)
        except ValueError as error:
            raise CommandError(f"{error} (--artifact-location)") from None
        experiment_id = client.create_experiment(options.experiment, artifact_location=location)
    return _run(options, stream, cursor, lambda saved: MlflowExporter(client, experiment_id, stream, saved))


def _export_tensorboard(options: argparse.Namespace) -> int:
    stream = stream_path(options.run)
    try:
        from trainwire.export.tensorboard import TensorBoardExporter
    except ImportError as error:
        raise CommandError(
            f"export tensorboard needs TensorBoard: pip install 'trainwire[tensorboard]' ({error})"
        ) from None
    key = hashlib.sha256(str(stream.absolute()).encode()).hexdigest()[:12]
    cursor = options.cursor or options.logdir / CURSOR_DIR / f"{stream.name}-{key}.json"
    return _run(options, stream, cursor, lambda saved: TensorBoardExporter(options.logdir, stream.parent))


def _export_wandb(options: argparse.Namespace) -> int:
    stream = stream_path(options.run)
    try:
        from trainwire.export.wandb import WandbExporter
    except ImportError as error:
        raise CommandError(f"export wandb needs wandb: pip install 'trainwire[wandb]' ({error})") from None
    directory = options.dir or stream.parent
    key = hashlib.sha256(f"{stream.absolute()}\n{options.project}".encode()).hexdigest()[:12]
    cursor = options.cursor or directory / CURSOR_DIR / f"{stream.name}.wandb-{key}.json"
    return _run(options, stream, cursor, lambda saved: WandbExporter(directory, options.project, stream.parent))


def _run(options: argparse.Namespace, stream: Path, cursor: Path, make_exporter: Any) -> int:
    from trainwire.export.sync import ExportError, load_cursor, sync

    try:
        saved = load_cursor(cursor, stream)
        exporter = make_exporter(saved["sink"] if saved else None)
        try:
            synced = sync(stream, exporter, cursor, saved=saved, follow=options.follow, poll_interval_s=options.poll)
        finally:
            exporter.close()
    except ExportError as error:
        raise CommandError(str(error)) from None
    sys.stderr.write(f"exported {synced.events} event(s) from {stream}\n")
    for run_id in synced.unfinished:
        sys.stderr.write(f"{safe(run_id)}: ended without run.finished (stale): marked so in the tracker\n")
    if not synced.skipped_lines:
        # a run that died ends the export as it ends `tail`: not finished
        return NOT_FINISHED_EXIT_CODE if synced.unfinished else 0
    # every valid line is exported; the bad ones are said, and the exit says the copy is not whole
    first = synced.first_skipped
    where = f" (first: line {first.line}, {first.code}: {safe(first.message)})" if first else ""
    raise CommandError(f"export: {stream}: {synced.skipped_lines} invalid line(s) skipped{where}")
