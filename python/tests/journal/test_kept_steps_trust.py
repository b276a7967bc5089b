"""Step records that cannot be trusted cost only themselves: a record naming a line the run
never wrote (an impossible `after`) is one diagnostic and the records after it are kept; a
step file whose first line names another run is left out whole, from wherever it is read; a
step file written before the first line named its run still reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import STEPS_FILE, STREAM_FILE, run_journal_dir
from trainwire.journal.kept_steps import KeptStepsMerge, every_line
from trainwire.reader.state import StreamReader

STEPS = 3_000


def throttled_run(out: Path, steps: int = STEPS) -> str:
    """A run a tenth of a second a step under the one-second throttle: nine in ten kept."""
    clock = FakeClock()
    with Run(out, clock=clock, heartbeat_interval_s=None) as run:
        run.start(total_steps=steps, provenance=False)
        for step in range(1, steps + 1):
            clock.advance(0.1)
            run.step(step, loss=1.0 / step)
    return run.run_id


def read_all(out: Path) -> tuple[list[int], list[str]]:
    said: list[str] = []
    lines = every_line(out / STREAM_FILE, StreamReader(), report=said.append)
    return [line["step"] for line in lines if line["event"] == "train.step"], said


def test_records_naming_a_line_never_written_cost_only_themselves(tmp_path: Path) -> None:
    step_file = run_journal_dir(tmp_path, throttled_run(tmp_path)) / STEPS_FILE
    header, *records = step_file.read_bytes().splitlines(keepends=True)
    impossible = [
        json.dumps({**json.loads(records[10]), "after": 10**9 + n, "step": 10**6 + n}).encode() + b"\n"
        for n in range(3)  # three in a row, each naming a line the run never wrote
    ]
    step_file.write_bytes(header + b"".join(records[:11]) + b"".join(impossible) + b"".join(records[11:]))
    steps, said = read_all(tmp_path)
    assert steps == list(range(1, STEPS + 1))  # every step the run logged, none of the three
    assert len(said) == 3 and all("past the records after it" in message for message in said), said


def test_a_step_file_naming_another_run_is_left_out_from_wherever_it_is_read(tmp_path: Path) -> None:
    run_id = throttled_run(tmp_path / "one", steps=50)
    other = throttled_run(tmp_path / "two", steps=60)
    step_file = run_journal_dir(tmp_path / "one", run_id) / STEPS_FILE
    step_file.write_bytes((run_journal_dir(tmp_path / "two", other) / STEPS_FILE).read_bytes())
    steps, said = read_all(tmp_path / "one")
    assert steps == _streamed(tmp_path / "one")  # the stream's own steps alone
    assert len(said) == 1 and f"keeps the steps of run {other}" in said[0]
    # read from its end (as `trainwire runs` reads) or from an offset (a snapshot, a cursor)
    for merge in (
        KeptStepsMerge(tmp_path / "one", tail_bytes=1024),
        KeptStepsMerge(tmp_path / "one", offsets={run_id: 500}),
    ):
        lines = StreamReader().feed((tmp_path / "one" / STREAM_FILE).read_bytes()).dicts
        merged = [*merge.merge(lines), *merge.finish()]
        assert [line["step"] for line in merged if line["event"] == "train.step"] == _streamed(tmp_path / "one")


def test_a_step_file_whose_records_do_not_name_the_run_still_reads(tmp_path: Path) -> None:
    step_file = run_journal_dir(tmp_path, throttled_run(tmp_path)) / STEPS_FILE
    header, *records = step_file.read_bytes().splitlines(keepends=True)
    assert json.loads(header) == {"run_id": step_file.parent.name}
    step_file.write_bytes(b"".join(records))  # as written before the first line named the run
    steps, said = read_all(tmp_path)
    assert steps == list(range(1, STEPS + 1)) and said == []


def _streamed(out: Path) -> list[Any]:
    lines = [json.loads(line) for line in (out / STREAM_FILE).read_text().splitlines()]
    return [line["step"] for line in lines if line["event"] == "train.step"]
