"""`trainwire diff`: two runs side by side (config, provenance, metrics, notes), or one run's
config against its reference (`--against`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwire.cli.journal_runs import JournalError, add_roots_argument, find_run, load_json, run_summary
from trainwire.cli.table import print_table
from trainwire.contract.clock import now_us
from trainwire.contract.config_diff import differences, flatten
from trainwire.contract.layout import CONFIG_DIFF_FILE, CONFIG_FILE, ENVIRONMENT_FILE, NOTES_FILE, STREAM_FILE
from trainwire.journal.files import MAX_NOTES_BYTES, read_journal_text
from trainwire.journal.notes import note_entries
from trainwire.lines.exact_checks import integral_floats_to_int
from trainwire.lines.verdict import status_text
from trainwire.reader.verdicts import judge

__all__ = ["compare", "register_diff"]


def register_diff(commands: Any) -> None:
    diff = commands.add_parser(
        "diff",
        help="compare two runs: config, provenance, metrics, notes",
        description=f"Config diff, provenance diff (git sha, dirty, seeds, package versions), metrics side by side and each run's notes. RUN is a run id (looked for under --in DIR, default .), a run's journal directory, an output directory (its latest run) or its {STREAM_FILE}. With --against REF and one RUN: RUN's config against REF's (recorded at its start by Run(config_reference=...) when REF is its reference, else computed now); --against alone: against the reference it recorded.",
    )
    diff.add_argument("run_a", metavar="RUN_A")
    diff.add_argument("run_b", nargs="?", metavar="RUN_B")
    diff.add_argument("--against", nargs="?", const="", metavar="REF", help="RUN_A's config against REF's")
    add_roots_argument(diff)
    diff.add_argument("--json", action="store_true", help="print the comparison as JSON")
    diff.set_defaults(command=_diff)


def compare(run_a: str, run_b: str, roots: list[Path]) -> dict[str, Any]:
    """Config, provenance, metrics and notes of two runs: only what differs in the config and
    provenance, every metric of either run."""
    a, b = _run_record(run_a, roots), _run_record(run_b, roots)
    return {
        "runs": [a["run_id"], b["run_id"]],
        "config": differences(flatten(a["config"]), flatten(b["config"])),
        "provenance": differences(flatten(a["provenance"]), flatten(b["provenance"])),
        "metrics": {
            name: [a["metrics"].get(name), b["metrics"].get(name)]
            for name in sorted(set(a["metrics"]) | set(b["metrics"]))
        },
        "notes": [a["notes"], b["notes"]],
    }


def against(run: str, reference: str, roots: list[Path]) -> dict[str, Any]:
    """`run`'s config against `reference`'s (`""`: the reference it recorded at its start)."""
    stream, journal = find_run(run, roots)
    recorded = _recorded_diff(journal) if journal is not None else None
    record = _run_record(run, roots)
    if reference == "" or (recorded is not None and recorded.reference_id == Path(reference).name):
        if recorded is None:
            raise JournalError(f"{run}: no config reference was recorded (Run(config_reference=...))")
        if recorded.changes is None:
            raise JournalError(
                f"{run}: its config reference {recorded.reference_path} was not found when it started; "
                "name one with --against REF"
            )
        return {"runs": [recorded.reference_id, record["run_id"]], "config": recorded.changes}
    other = _run_record(reference, roots)
    return {
        "runs": [other["run_id"], record["run_id"]],
        "config": differences(flatten(other["config"]), flatten(record["config"])),
    }


@dataclass(frozen=True)
class _RecordedDiff:
    """A run's `config_diff.json`, checked: `changes` is None when the reference was not found."""

    reference_id: str | None
    reference_path: str
    changes: dict[str, list[Any]] | None


def _recorded_diff(journal: Path) -> _RecordedDiff | None:
    """The config diff recorded at the run's start, or None when absent or not of its shape
    (a file edited or damaged since: said on stderr, never trusted)."""
    path = journal / CONFIG_DIFF_FILE
    recorded = load_json(path)
    if recorded is None:
        return None
    reference = recorded.get("reference") if isinstance(recorded, Mapping) else None
    changes = recorded.get("changes") if isinstance(recorded, Mapping) else None
    reference_id = reference.get("run_id") if isinstance(reference, Mapping) else None
    reference_path = reference.get("path") if isinstance(reference, Mapping) else None
    if (
        not isinstance(reference, Mapping)
        or not (reference_id is None or isinstance(reference_id, str))
        or not isinstance(reference_path, str)
        or not (changes is None or _is_changes(changes))
    ):
        sys.stderr.write(f"trainwire diff: {path} is not a config diff; ignored\n")
        return None
    return _RecordedDiff(reference_id, reference_path, None if changes is None else dict(changes))


def _is_changes(changes: Any) -> bool:
    """`{key: [reference's value, this run's value]}`, as `differences` writes it."""
    return isinstance(changes, Mapping) and all(
        isinstance(key, str) and isinstance(pair, list) and len(pair) == 2 for key, pair in changes.items()
    )


def _run_record(reference: str, roots: list[Path]) -> dict[str, Any]:
    stream, journal = find_run(reference, roots)
    summary = run_summary(stream, journal)
    started = _run_started(stream, summary["run_id"], journal) if journal is None else {}
    config = load_json(journal / CONFIG_FILE) if journal is not None else load_json(stream.parent / CONFIG_FILE)
    if config is None:
        config = (started or _run_started(stream, summary["run_id"], journal)).get("config") or {}
    provenance = load_json(journal / ENVIRONMENT_FILE) if journal is not None else None
    if not isinstance(provenance, Mapping):
        provenance = (started or _run_started(stream, summary["run_id"], journal)).get("provenance") or {}
    verdict = judge(summary, now_us())  # status, step, duration, bests: the verdict's, as on every surface
    metrics = {f"last {name}": value for name, value in summary["last"].items()}
    metrics.update({f"best {name}": best["value"] for name, best in verdict["best"].items()})
    metrics.update({"status": status_text(verdict), "step": verdict["step"], "duration_s": verdict["duration_s"]})
    if verdict["checkpoint"] is not None:
        metrics["checkpoint"] = verdict["checkpoint"]["path"]
    for name in ("tokens", "objective"):
        if summary.get(name) is not None:
            metrics[name] = summary[name]
    metrics.update(_trial_metrics(summary.get("trials")))
    notes = note_entries(_read_text(journal / NOTES_FILE)) if journal is not None else []
    return {
        "run_id": summary["run_id"],
        "config": config,
        "provenance": dict(provenance),
        "metrics": metrics,
        "notes": notes,
    }


def _trial_metrics(trials: Mapping[str, Any] | None) -> dict[str, Any]:
    """A search's trial count, best trial and that trial's params (`best trial lr`)."""
    if not trials:
        return {}
    found: dict[str, Any] = {"trials": trials["count"]}
    best = trials.get("best")
    if best is not None:
        found["best trial"] = best["trial"]
        params = integral_floats_to_int(dict(best.get("params") or {}))  # integers stay integers
        found.update({f"best trial {name}": value for name, value in sorted(params.items())})
    return found


def _read_text(path: Path) -> str:
    try:
        return read_journal_text(path, MAX_NOTES_BYTES)
    except OSError:
        return ""


def _run_started(stream: Path, run_id: str, journal: Path | None) -> Mapping[str, Any]:
    """The `run.started` line of `run_id`: from its journal's snapshot when the stream can be
    read on from it, else read from the stream until found."""
    from trainwire.journal.opening import read_snapshot  # the reader's models: only when a file is missing
    from trainwire.reader.sources import read_file
    from trainwire.reader.state import StreamReader

    snapshot = read_snapshot(stream, journal) if journal is not None else None
    if snapshot is not None:
        saved = next((line for line in snapshot["events"] if line.get("event") == "run.started"), None)
        if isinstance(saved, Mapping):
            return saved
    reader = StreamReader()
    for chunk in read_file(stream):
        for line in reader.feed(chunk).dicts:
            if line.get("event") == "run.started" and line.get("run_id") == run_id:
                return line
    return {}


def _diff(options: argparse.Namespace) -> int:
    roots = options.roots or [Path(".")]
    try:
        if options.against is not None:
            if options.run_b is not None:
                raise JournalError("--against takes one RUN")
            comparison = against(options.run_a, options.against, roots)
        elif options.run_b is None:
            raise JournalError("two runs to compare, or one with --against")
        else:
            comparison = compare(options.run_a, options.run_b, roots)
    except JournalError as error:
        sys.stderr.write(f"trainwire diff: {error}\n")
        return 1
    if options.json:
        sys.stdout.write(json.dumps(comparison, ensure_ascii=False, indent=2) + "\n")
        return 0
    run_a, run_b = comparison["runs"]
    for section in ("config", "provenance", "metrics"):
        if section not in comparison:
            continue
        sys.stdout.write(f"{section}\n")
        rows = [[f"  {key}", _show(a), _show(b)] for key, (a, b) in comparison[section].items()]
        print_table(rows or [["  (no difference)", "", ""]], ("", run_a or "-", run_b or "-"))
    for run_id, notes in zip(comparison["runs"], comparison.get("notes", []), strict=False):
        if notes:
            sys.stdout.write(f"notes of {run_id}\n")
            sys.stdout.writelines(f"  {ts}  {text}\n" for ts, text in notes)
    return 0


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else json.dumps(value)
