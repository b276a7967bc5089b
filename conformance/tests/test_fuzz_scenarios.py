"""Fuzzing (b): random scenarios through the reference writer keep the stream invariants
and read back, with the Python reader, to the events written: one run, or a run and the
run that resumes it (`resumed_from`), stopped from the control file, a signal or the API."""

from __future__ import annotations

import json

from conformance_support import FUZZ
from fuzz_strategies import scenarios
from hypothesis import HealthCheck, given, settings

from trainwire.conformance.diff import first_difference
from trainwire.conformance.scenario import play
from trainwire.lines.decoder import Decoder
from trainwire.lines.summary import SummaryBuilder
from trainwire.reader.invariants import check_stream
from trainwire.reader.state import read_state


@settings(FUZZ, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenario=scenarios())
def test_random_scenarios_keep_the_invariants_and_read_back(scenario):
    stream = play(scenario)
    assert check_stream(stream) == []
    written = [json.loads(line) for line in stream.splitlines()]

    decoder = Decoder()
    events = [event.model_dump(mode="json", exclude_unset=True) for event in decoder.feed(stream)]
    assert decoder.diagnostics == []
    assert first_difference(written, events) is None

    state = read_state(stream)
    assert state["diagnostics"] == [] and state["partial_tail_bytes"] == 0
    assert [run["run_id"] for run in state["runs"]] == list(dict.fromkeys(line["run_id"] for line in written))
    for run in state["runs"]:
        assert_run_reads_back(run, [line for line in written if line["run_id"] == run["run_id"]])
    assert_summary_follows_the_latest_run(written)


def assert_run_reads_back(run: dict, written: list[dict]) -> None:
    """The reader's state of one run of the stream agrees with the lines written for it."""
    assert run["events"] == run["last_seq"] == len(written)
    finished = {
        key: value
        for key, value in written[-1].items()
        if key not in ("schema_version", "seq", "ts", "run_id", "event")
    }
    assert run["status"] == written[-1]["status"] and first_difference(finished, run["finished"]) is None
    # contract 1.1: a record per trial, every rollback, the stop criterion
    started = {line["trial"] for line in written if line["event"] == "trial.started"}
    assert {record["trial"] for record in run["trials"]["list"]} >= started
    assert len(run["rollbacks"]) == sum(line["event"] == "train.rolled_back" for line in written)
    stops = [line for line in written if line["event"] == "stop.requested"]
    criteria = [line["criterion"] for line in stops if "criterion" in line]
    assert run["stop_criterion"] == (criteria[-1] if criteria else None)
    # a stop from the control file, a signal or the API reads as asked, whatever its source
    assert run["stop_requested"] == bool(stops)


def assert_summary_follows_the_latest_run(written: list[dict]) -> None:
    """The journal's summary (what `runs` and `journal rebuild` show) names the latest run,
    the run it resumed and how it ended: a restart reads as one, not as two unrelated runs."""
    builder = SummaryBuilder()
    for line in written:
        builder.add(line)
    summary = builder.summary()
    latest = [line for line in written if line["run_id"] == written[-1]["run_id"]]
    started, finished = latest[0], latest[-1]
    resumed = started.get("resumed_from")
    assert summary["run_id"] == started["run_id"]
    assert summary["resumed_from"] == (resumed["run_id"] if resumed else None)
    assert summary["earlier_runs"] == [line["run_id"] for line in written if line["event"] == "run.started"][:-1]
    assert (summary["status"], summary["reason"], summary["exit_code"]) == (
        finished["status"],
        finished["reason"],
        finished["exit_code"],
    )
