"""`trainwire export mlflow|tensorboard|wandb|kubeflow RUN`: the stream into a tracker, once or with --follow,
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
#: the multiples a size may be given in (binary: `8G` is 8 GiB)
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


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

    kubeflow = trackers.add_parser(
        "kubeflow",
        help="the progress of the stream's last run into a Kubeflow TrainJob's status",
        description="Progress, ETA and metrics of the stream's last run posted to a Kubeflow Trainer TrainJob's "
        "status (`kubectl get trainjob`), as a run inside the TrainJob reports them itself. The endpoint is the one "
        "Kubeflow Trainer injects (KUBEFLOW_TRAINER_SERVER_URL, _CA_CERT, _TOKEN) unless given.",
    )
    _common(kubeflow)
    kubeflow.add_argument("--url", metavar="URL", help="the status endpoint (default $KUBEFLOW_TRAINER_SERVER_URL)")
    kubeflow.add_argument(
        "--ca-cert", metavar="FILE", help="the CA file to verify it with (default $KUBEFLOW_TRAINER_SERVER_CA_CERT)"
    )
    kubeflow.add_argument(
        "--token-file",
        metavar="FILE",
        help="the file holding the bearer token, read for each post (default $KUBEFLOW_TRAINER_SERVER_TOKEN)",
    )
    kubeflow.add_argument(
        "--interval",
        type=positive_seconds,
        metavar="S",
        help="seconds between two posts besides the start, evaluations and the end "
        "(default $TRAINWIRE_KUBEFLOW_INTERVAL_S, else 5)",
    )
    kubeflow.set_defaults(command=_export_kubeflow)


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
    parser.add_argument(
        "--batch-events",
        type=positive_count,
        metavar="N",
        help="events sent at once: the cursor moves after each batch the tracker holds "
        "(default: MLflow 200, TensorBoard 1000, W&B 5000, where each batch is one offline part)",
    )
    parser.add_argument(
        "--max-copy-bytes",
        type=byte_size,
        metavar="SIZE",
        help="the most bytes of the stream and of a step file sent as files; a larger one is left out "
        "with one line (bytes, or with K, M, G, T; default 8G: export.journal_copies.DEFAULT_COPY_CAP)",
    )


def byte_size(text: str) -> int:
    """A number of bytes, with an optional K, M, G or T (binary multiples): `8G`, `500M`, `1024`."""
    number, unit = text.strip(), ""
    if number[-1:].upper() in _SIZE_UNITS:
        number, unit = number[:-1], number[-1].upper()
    if not number.isdigit() or int(number) == 0:
        raise argparse.ArgumentTypeError(f"not a size in bytes (like 8G or 500M): {text!r}")
    return int(number) * _SIZE_UNITS[unit]


def _export_mlflow(options: argparse.Namespace) -> int:
    stream = _stream(options)
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
    return _run(
        options,
        stream,
        cursor,
        lambda saved: MlflowExporter(client, experiment_id, stream, saved, copy_cap=_copy_cap(options)),
    )


def _export_tensorboard(options: argparse.Namespace) -> int:
    stream = _stream(options)
    try:
        from trainwire.export.tensorboard import TensorBoardExporter
    except ImportError as error:
        raise CommandError(
            f"export tensorboard needs TensorBoard: pip install 'trainwire[tensorboard]' ({error})"
        ) from None
    key = hashlib.sha256(str(stream.absolute()).encode()).hexdigest()[:12]
    cursor = options.cursor or options.logdir / CURSOR_DIR / f"{stream.name}-{key}.json"
    return _run(options, stream, cursor, lambda saved: TensorBoardExporter(options.logdir, stream.parent, saved))


def _export_wandb(options: argparse.Namespace) -> int:
    stream = _stream(options)
    try:
        from trainwire.export.wandb import WandbExporter
    except ImportError as error:
        raise CommandError(f"export wandb needs wandb: pip install 'trainwire[wandb]' ({error})") from None
    directory = options.dir or stream.parent
    key = hashlib.sha256(f"{stream.absolute()}\n{options.project}".encode()).hexdigest()[:12]
    cursor = options.cursor or directory / CURSOR_DIR / f"{stream.name}.wandb-{key}.json"
    return _run(
        options,
        stream,
        cursor,
        lambda saved: WandbExporter(directory, options.project, stream.parent, saved, copy_cap=_copy_cap(options)),
    )


def positive_count(text: str) -> int:
    """A whole number above 0."""
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"not a whole number above 0: {text!r}")
    return int(text)


def _copy_cap(options: argparse.Namespace) -> int:
    from trainwire.export.journal_copies import DEFAULT_COPY_CAP

    return options.max_copy_bytes or DEFAULT_COPY_CAP


def _stream(options: argparse.Namespace) -> Path:
    """The stream RUN names, checked before anything is made: a wrong path must not leave a
    tracking store, a log directory or a cursor behind. With --follow a run to come is waited for."""
    stream = stream_path(options.run)
    if stream.exists() and not stream.is_file():  # a FIFO or a device: opened, it would block or never end
        raise CommandError(f"{stream}: not a regular file")
    if not options.follow and not stream.is_file():
        raise CommandError(f"{options.run}: no such stream file or run directory (no {stream})")
    return stream


def _export_kubeflow(options: argparse.Namespace) -> int:
    import os

    from trainwire.export.kubeflow import KubeflowExporter
    from trainwire.writer.kubeflow.environment import (
        CA_CERT_VARIABLE,
        TOKEN_VARIABLE,
        URL_VARIABLE,
        StatusEndpoint,
        interval_from,
    )

    stream = _stream(options)
    url = options.url or os.environ.get(URL_VARIABLE)
    ca_file = options.ca_cert or os.environ.get(CA_CERT_VARIABLE)
    token_file = options.token_file or os.environ.get(TOKEN_VARIABLE)
    if not (url and ca_file and token_file):
        raise CommandError(
            f"export kubeflow needs the TrainJob's endpoint: {URL_VARIABLE}, {CA_CERT_VARIABLE} and "
            f"{TOKEN_VARIABLE} (Kubeflow Trainer sets them in a trainer container), or --url, --ca-cert, --token-file"
        )
    endpoint = StatusEndpoint(url, ca_file, token_file)
    interval = options.interval if options.interval is not None else interval_from(os.environ)
    key = hashlib.sha256(f"{stream.absolute()}\n{url}".encode()).hexdigest()[:12]
    cursor = options.cursor or stream.parent / CURSOR_DIR / f"{stream.name}.kubeflow-{key}.json"
    exporters: list[KubeflowExporter] = []

    def make(saved: Any) -> KubeflowExporter:
        exporters.append(KubeflowExporter(endpoint, saved, interval_s=interval))
        return exporters[-1]

    code = _run(options, stream, cursor, make)
    if exporters and exporters[0].unposted:
        # the cursor says so too: the next export posts the status again
        raise CommandError("export kubeflow: the TrainJob did not take the last status; run the export again")
    return code


def _run(options: argparse.Namespace, stream: Path, cursor: Path, make_exporter: Any) -> int:
    from trainwire.export.sync import ExportError, load_cursor, sync

    try:
        saved = load_cursor(cursor, stream)
        exporter = make_exporter(saved["sink"] if saved else None)
        if options.batch_events:
            exporter.batch_events = options.batch_events
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
