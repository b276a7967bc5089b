"""Every step of a run read back: the stream's lines with the journal's kept steps in place,
from a step file that may be torn, hostile, missing or another run's."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from support.step_files import kept_records

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import STEPS_FILE, STREAM_FILE, run_journal_dir
from trainwire.journal import step_file as kept_step_file
from trainwire.journal.kept_steps import KeptStepsMerge, every_line
from trainwire.reader.state import StreamReader


def throttled_run(out: Path, steps: int = 50) -> str:
    """A run whose stream holds its first and last steps, its step file the others."""
    run = Run(out, heartbeat_interval_s=None)
    run.start(total_steps=steps, provenance=False)
    for step in range(1, steps + 1):
        run.step(step, loss=1.0 / step)
    run.finish("succeeded")
    return run.run_id


def steps_of(lines: list[dict[str, Any]]) -> list[int]:
    return [line["step"] for line in lines if line["event"] == "train.step"]


def read_all(out: Path) -> tuple[list[dict[str, Any]], list[str]]:
    said: list[str] = []
    return list(every_line(out / STREAM_FILE, StreamReader(), report=said.append)), said


def test_every_step_comes_back_in_place(tmp_path: Path) -> None:
    throttled_run(tmp_path)
    streamed = steps_of(list(every_line(tmp_path / STREAM_FILE, StreamReader())))
    lines, said = read_all(tmp_path)
    assert steps_of(lines) == list(range(1, 51)) and said == []
    assert len(streamed) == 50
    assert [line["event"] for line in lines][-2:] == ["train.step", "run.finished"]


def test_a_torn_last_line_waits_and_a_bad_line_is_one_diagnostic(tmp_path: Path) -> None:
    run_id = throttled_run(tmp_path)
    step_file = run_journal_dir(tmp_path, run_id) / STEPS_FILE
    header, *records = step_file.read_text().splitlines(keepends=True)
    bad = [b"not json\n", json.dumps({**json.loads(records[3]), "step": "four"}).encode() + b"\n"]
    kept = header + "".join(records[:3])
    step_file.write_bytes(kept.encode() + b"".join(bad) + "".join(records[4:]).encode() + b'{"after')
    lines, said = read_all(tmp_path)
    assert steps_of(lines) == [step for step in range(1, 51) if step != 5]  # record 3 is step 5
    assert len(said) == 2 and all(str(step_file) in message for message in said)
    assert "not a kept step" in said[0] and "not a valid train.step" in said[1]


def test_a_missing_journal_or_a_fifo_gives_the_stream_alone(tmp_path: Path) -> None:
    run_id = throttled_run(tmp_path)
    step_file = run_journal_dir(tmp_path, run_id) / STEPS_FILE
    step_file.unlink()
    lines, said = read_all(tmp_path)
    assert len(steps_of(lines)) == 2 and said == []
    os.mkfifo(step_file)
    found: list[tuple[list[dict[str, Any]], list[str]]] = []
    reading = threading.Thread(target=lambda: found.append(read_all(tmp_path)), daemon=True)
    reading.start()
    reading.join(timeout=30)
    assert found, "reading a FIFO named steps.jsonl blocked"
    ((lines, said),) = found
    assert len(steps_of(lines)) == 2 and "not a regular file" in said[0]
    assert len(said) == 1  # refused once, not again for each line of the stream


def test_a_step_file_from_another_run_is_left_out(tmp_path: Path) -> None:
    run_id = throttled_run(tmp_path / "one")
    other = throttled_run(tmp_path / "two", steps=5)
    foreign = run_journal_dir(tmp_path / "one", run_id) / STEPS_FILE
    (first, *_) = kept_records(run_journal_dir(tmp_path / "two", other) / STEPS_FILE)
    record = json.dumps(first)
    with foreign.open("a") as file:  # records naming lines past the run's last, then one going back
        file.write(json.dumps({**json.loads(record), "after": 999}) + "\n")
        file.write(json.dumps({**json.loads(record), "after": 1}) + "\n")
    lines, said = read_all(tmp_path / "one")
    assert steps_of(lines) == list(range(1, 51))
    assert any("before the one before it" in message for message in said)
    assert any("past the run's last" in message for message in said)


def test_a_killed_runs_steps_after_its_last_line_come_at_the_end_and_then_grow(tmp_path: Path) -> None:
    throttled_run(tmp_path)
    stream = tmp_path / STREAM_FILE
    stream.write_bytes(b"".join(stream.read_bytes().splitlines(keepends=True)[:2]))  # killed after its first step
    reader = StreamReader()
    merge = KeptStepsMerge(tmp_path)
    lines = list(merge.merge(reader.feed((tmp_path / STREAM_FILE).read_bytes()).dicts))
    assert steps_of(lines) == [1]  # the stream's only step: the rest came after its last line
    tail = merge.flush()
    assert steps_of(tail) == list(range(2, 50)) and all("seq" not in line for line in tail)
    assert merge.flush() == []  # each once
    again = KeptStepsMerge(tmp_path, offsets=merge.offsets(), last_seqs={r.run_id: r.last_seq for r in reader.runs})
    assert again.flush() == []  # a later read goes on where this one stopped


def test_hostile_records_are_each_one_diagnostic_and_the_rest_comes_through(tmp_path: Path) -> None:
    run_id = throttled_run(tmp_path)
    step_file = run_journal_dir(tmp_path, run_id) / STEPS_FILE
    header, first, *rest = step_file.read_bytes().splitlines(keepends=True)
    record = json.loads(first)
    hostile = [
        first.replace(b'"loss":0.5', b'"loss":NaN'),  # written null by any writer
        json.dumps({**record, "ts": "yesterday"}).encode() + b"\n",
        b'{"after":2,"metrics":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",  # nested past any parser
        b'{"after":2,"x":"' + b"x" * (2 << 20) + b'"}\n',  # longer than a stream line
    ]
    step_file.write_bytes(header + b"".join(hostile) + b"".join(rest))
    lines, said = read_all(tmp_path)
    assert steps_of(lines) == [1, *range(3, 51)]  # step 2 only came in hostile forms
    assert len(said) == 4, said
    assert all(isinstance(line["loss"], float) for line in lines if line["event"] == "train.step")


def test_a_step_file_read_to_its_end_is_read_again_only_once_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ten quick steps (kept but the first), then 200 a throttle interval apart (each streamed)
    clock = FakeClock()
    with Run(tmp_path, clock=clock, heartbeat_interval_s=None) as run:
        run.start(total_steps=210, provenance=False)
        for step in range(1, 211):
            clock.advance(0.01 if step <= 10 else 1.5)
            run.step(step, loss=1.0 / step)
    step_file = run_journal_dir(tmp_path, run.run_id) / STEPS_FILE
    opened: list[Path] = []
    real_open = kept_step_file.open_regular
    monkeypatch.setattr(kept_step_file, "open_regular", lambda path, **kw: opened.append(path) or real_open(path, **kw))
    lines = StreamReader().feed((tmp_path / STREAM_FILE).read_bytes()).dicts
    merge = KeptStepsMerge(tmp_path)
    middle = next(index for index, line in enumerate(lines) if line.get("step") == 100)
    first = list(merge.merge(lines[:middle]))
    assert steps_of(first) == list(range(1, 100))
    assert len(opened) <= 2  # not once a line: the file is read again only when it changed
    # a step the writer appends later, after the line of step 150: in its place
    record = json.loads(step_file.read_text().splitlines()[1])  # the first record, after the header
    after = next(line["seq"] for line in lines if line.get("step") == 150)
    with step_file.open("a") as file:
        file.write(json.dumps({**record, "after": after, "step": 1500}) + "\n")
    rest = steps_of(list(merge.merge(lines[middle:])) + merge.finish())
    assert rest == [*range(100, 151), 1500, *range(151, 211)]
    assert len(opened) <= 4
