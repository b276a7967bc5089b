"""Property: whatever a training script calls, in whatever order and with whatever values,
the stream is one a reader takes whole: every line valid, exactly one `run.finished`,
and the Python and TypeScript readers fold it to the same state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.typescript_side import typescript_lines

from trainwire.contract import canonical
from trainwire.contract.clock import FakeClock
from trainwire.reader.state import StreamReader
from trainwire.writer.run import Run
from trainwire.writer.sinks import MemorySink

numbers = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.booleans(),
    st.text(max_size=3),
    st.decimals(allow_nan=True, allow_infinity=True, places=3),
    st.floats(width=32, allow_nan=True).map(np.float32),
    st.integers(min_value=-5, max_value=50).map(np.int64),
    st.floats(min_value=-10, max_value=10).map(lambda value: torch.tensor(value)),
    st.just(Path("/tmp")),
)
steps = st.one_of(st.integers(min_value=-2, max_value=20), numbers)
names = st.sampled_from(["train", "evaluate", "save", "Bad Name", "", "x" * 70, "9lives"])
metrics = st.dictionaries(st.sampled_from(["acc", "loss", "", "k" * 300]), numbers, max_size=3)

calls = st.one_of(
    st.tuples(
        st.just("start"), steps, st.dictionaries(st.sampled_from(["lr", "hf_token", "tokenizer"]), numbers, max_size=2)
    ),
    st.tuples(st.just("step"), steps, numbers, numbers, metrics),
    st.tuples(st.just("phase_started"), names),
    st.tuples(st.just("phase_ended"), names, st.sampled_from(["ok", "failed", "bogus"])),
    st.tuples(st.just("epoch"), steps, steps),
    st.tuples(st.just("eval"), steps, metrics, st.sampled_from(["eval", "test", ""])),
    st.tuples(
        st.just("checkpoint"), steps, st.sampled_from(["ckpt/1", "/etc/passwd"]), st.sampled_from(["periodic", "bogus"])
    ),
    st.tuples(st.just("restarted"), st.sampled_from(["oom", "other", "disk"]), steps),
    st.tuples(st.just("trial_started"), steps, st.dictionaries(st.sampled_from(["lr", "opt"]), numbers, max_size=2)),
    st.tuples(st.just("trial_ended"), steps, st.sampled_from(["succeeded", "pruned", "bogus"])),
    st.tuples(
        st.just("stop_requested"),
        st.sampled_from(["api", "signal", "bogus"]),
        st.sampled_from([None, "SIGTERM", "SIGHUP"]),
    ),
    st.tuples(st.just("heartbeat")),
    st.tuples(st.just("emit"), st.sampled_from(["x.note", "run.heartbeat", "Bad", "run.finished"]), numbers),
    st.tuples(st.just("advance"), st.floats(min_value=0, max_value=5)),
    st.tuples(st.just("finish"), st.sampled_from(["succeeded", "interrupted", "bogus", "failed"])),
)


def play(sequence: list[tuple[Any, ...]], interval: float) -> bytes:
    sink = MemorySink()
    clock = FakeClock("2026-12-01T00:00:00Z")
    with Run(
        run_id="prop", sinks=[sink], heartbeat_interval_s=None, rank=0, clock=clock, step_interval_s=interval
    ) as run:
        for name, *args in sequence:
            if name == "start":
                run.start(total_steps=args[0], config=args[1], provenance=False)
            elif name == "step":
                run.step(args[0], loss=args[1], learning_rate=args[2], metrics=args[3])
            elif name == "phase_ended":
                run.phase_ended(args[0], args[1])
            elif name == "epoch":
                run.epoch(args[0], args[1])
            elif name == "eval":
                run.eval(args[0], args[1], split=args[2])
            elif name == "checkpoint":
                run.checkpoint(args[0], args[1], reason=args[2])
            elif name == "restarted":
                run.restarted(args[0], step=args[1])
            elif name == "trial_started":
                run.trial_started(args[0], args[1])
            elif name == "trial_ended":
                run.trial_ended(args[0], args[1])
            elif name == "stop_requested":
                run.stop_requested(args[0], signal=args[1])
            elif name == "emit":
                run.emit(args[0], x_value=args[1], status=args[1])
            elif name == "advance":
                clock.advance(args[0])
            else:
                getattr(run, name)(*args)
    return sink.getvalue()


def python_state(data: bytes) -> tuple[str, dict[str, Any]]:
    reader = StreamReader()
    reader.feed(data)
    reader.finish()
    state = reader.to_dict()
    for diagnostic in state["diagnostics"]:
        diagnostic["message"] = ""
    return canonical.dumps(state), state


def test_any_call_sequence_gives_a_stream_both_readers_take_whole(tmp_path: Path) -> None:
    streams: list[bytes] = []

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(sequence=st.lists(calls, max_size=25), interval=st.sampled_from([0.0, 1.0]))
    def check(sequence: list[tuple[Any, ...]], interval: float) -> None:
        data = play(sequence, interval)
        _, state = python_state(data)
        assert state["diagnostics"] == [], state["diagnostics"]
        events = [json.loads(line) for line in data.splitlines()]
        assert events[0]["event"] == "run.started"
        assert [event["event"] for event in events].count("run.finished") == 1
        assert events[-1]["event"] == "run.finished"
        assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
        streams.append(data)

    check()
    paths = []
    for index, data in enumerate(streams):
        path = tmp_path / f"{index}.ndjson"
        path.write_bytes(data)
        paths.append(path)
    request = [{"path": str(path), "now": None, "stale_after_s": None} for path in paths]
    typescript = typescript_lines("canonical-states.js", request)
    assert len(typescript) == len(streams) >= 100
    for data, ts_state in zip(streams, typescript, strict=False):
        assert python_state(data)[0] == ts_state, data
