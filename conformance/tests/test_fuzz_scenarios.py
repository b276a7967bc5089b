"""Fuzzing (b): random scenarios through the reference writer keep the stream invariants
and read back, with the Python reader, to the events written."""

from __future__ import annotations

import json

from conformance_support import FUZZ
from fuzz_strategies import scenarios
from hypothesis import HealthCheck, given, settings

from trainwire.conformance.diff import first_difference
from trainwire.conformance.scenario import play
from trainwire.lines.decoder import Decoder
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
    (run,) = state["runs"]
    assert state["diagnostics"] == [] and state["partial_tail_bytes"] == 0
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
    criteria = [line["criterion"] for line in written if line["event"] == "stop.requested" and "criterion" in line]
    assert run["stop_criterion"] == (criteria[-1] if criteria else None)
