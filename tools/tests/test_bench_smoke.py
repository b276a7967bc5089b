"""`make bench` at a tiny size: every figure yields one well-formed record (no timing asserted)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tools" / "bench"
sys.path.insert(0, str(BENCH))

import run  # noqa: E402  (tools/bench is a folder of scripts, not a package)
from records import Figure, Measurement, Target  # noqa: E402
from run import FIGURES  # noqa: E402
from streams import write_stream  # noqa: E402

from trainwire.contract.models import LINE_ADAPTER  # noqa: E402

RECORD_KEYS = {"name", "value", "baseline", "ratio", "spread", "target", "pass", "unit", "notes"}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    output = tmp_path_factory.mktemp("bench") / "results.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--output", str(output), "--report-only"],
        cwd=ROOT,
        env={**os.environ, "TRAINWIRE_BENCH_SCALE": "tiny"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(output.read_text(encoding="utf-8")), done.stdout


def test_every_figure_has_one_well_formed_record(bench: tuple[dict, str]) -> None:
    results, _ = bench
    assert results["scale"] == "tiny"
    records = results["records"]
    names = [record["name"] for record in records]
    assert names == [figure.name for figure in FIGURES]
    for record in records:
        assert set(record) == RECORD_KEYS, record
        assert isinstance(record["name"], str) and isinstance(record["unit"], str) and record["unit"]
        assert isinstance(record["target"], str) and record["target"]
        assert record["pass"] in (True, False, None)
        assert isinstance(record["notes"], str)


def test_every_figure_was_measured(bench: tuple[dict, str]) -> None:
    """No error rows: every component the bench measures exists and ran."""
    errors = {record["name"]: record["notes"] for record in bench[0]["records"] if record["notes"].startswith("error:")}
    assert errors == {}


def test_measured_records_are_consistent(bench: tuple[dict, str]) -> None:
    for record in bench[0]["records"]:
        if record["notes"].startswith("error:"):
            assert record["value"] is None and record["pass"] is False
            continue
        assert _is_number(record["value"]) and record["value"] >= 0, record
        if record["baseline"] is not None:
            assert _is_number(record["baseline"]) and record["baseline"] > 0, record
            assert _is_number(record["ratio"]), record
        if record["spread"] is not None:  # the median of the rounds lies within their range
            low, high = record["spread"]
            assert low <= record["ratio"] <= high, record
        judged = not record["target"].startswith("report")
        assert (record["pass"] is None) == (not judged), record


def test_results_name_the_machine(bench: tuple[dict, str]) -> None:
    machine = bench[0]["machine"]
    assert isinstance(machine["cpus"], int) and machine["cpus"] >= 1
    assert machine["python"].count(".") == 2
    assert machine["node"].startswith("v")  # make test installs Node; the TypeScript figures need it


@pytest.mark.parametrize(("ratio", "report_only", "status"), [(2.0, False, 1), (2.0, True, 0), (0.5, False, 0)])
def test_exit_status_says_whether_a_target_was_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ratio: float, report_only: bool, status: int
) -> None:
    rounds = [ratio * 0.9, ratio, ratio * 1.2]
    figure = Figure(
        "stand-in", "s", Target("<= 1x", "ratio_at_most", 1.0), lambda ctx: Measurement(ratio, 1.0, rounds=rounds)
    )
    monkeypatch.setattr(run, "FIGURES", [figure])
    monkeypatch.setenv("TRAINWIRE_BENCH_SCALE", "tiny")
    argv = ["--output", str(tmp_path / "results.json")] + (["--report-only"] if report_only else [])
    assert run.main(argv) == status
    record = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["records"][0]
    assert record["ratio"] == ratio and record["spread"] == [rounds[0], rounds[2]]
    assert record["pass"] is (ratio <= 1.0)


def test_table_lists_every_figure(bench: tuple[dict, str]) -> None:
    results, table = bench
    for record in results["records"]:
        assert record["name"] in table


def test_generated_stream_is_valid_and_gap_free(tmp_path: Path) -> None:
    """The reader figures are only meaningful on a stream every reader accepts whole."""
    path = tmp_path / "stream.ndjson"
    size = write_stream(path, 300_000, block_bytes=100_000)
    assert size == path.stat().st_size > 250_000
    last_seq: dict[str, int] = defaultdict(int)
    finished: set[str] = set()
    for raw in path.read_bytes().splitlines():
        event = LINE_ADAPTER.validate_json(raw, strict=True).root  # v1 events only, no unknown ones
        assert event.run_id not in finished
        assert event.seq == last_seq[event.run_id] + 1
        last_seq[event.run_id] = event.seq
        if event.event == "run.finished":
            finished.add(event.run_id)
    assert len(last_seq) == 3 and finished == set(last_seq)
