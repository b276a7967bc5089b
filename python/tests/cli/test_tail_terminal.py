"""`trainwire tail` on a real terminal (a pseudo-terminal): status lines that fit, colours, one line per run."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT

from trainwire.cli.status_line import RunTrend, cells, fit, printable, render_status, status_fields
from trainwire.contract.clock import FakeClock, parse_timestamp_us
from trainwire.reader.state import StreamReader
from trainwire.writer.run import Run

SGR = re.compile(r"\x1b\[[0-9;]*m")


def write_run(directory: Path, run_id: str, *, steps: int, finish: bool) -> Path:
    """A real stream from the Run API on a fake clock: 0.5 s per step, a restart, evals."""
    clock = FakeClock("2026-11-29T10:00:00Z")
    run = Run(directory, run_id=run_id, clock=clock, step_interval_s=0, heartbeat_thread=False, heartbeat_interval_s=5)
    run.start(total_steps=1000, provenance=False)
    run.phase_started("train")
    for step in range(1, steps + 1):
        clock.advance(0.5)
        run.step(step, loss=4.0 / step**0.5, learning_rate=3e-4)
        if step == steps // 2:
            run.restarted("oom", step=step, batch_size_from=16, batch_size_to=8)
    if finish:
        run.phase_ended("train")
        run.finish("succeeded")
    run.close()
    return directory / "progress.jsonl"


def folded(path: Path) -> tuple[StreamReader, RunTrend]:
    reader = StreamReader()
    trend = RunTrend()
    for event in reader.feed(path.read_bytes()):
        trend.add(event)
    return reader, trend


def test_the_line_keeps_step_eta_and_loss_at_any_width(tmp_path: Path) -> None:
    path = write_run(tmp_path / "run", "a-rather-long-run-name-2026-11-29", steps=40, finish=False)
    reader, trend = folded(path)
    run = reader.runs[0]
    now_us = parse_timestamp_us(run.last_ts) + 1_000_000
    fields = status_fields(run, trend, "running", now_us)
    full = " ".join(field.text for field in fields)
    for part in (
        "train",
        "[#...",
        "4%",
        "step 40/1000",
        "elapsed 21.0s",
        "eta ",
        "2 steps/s",
        "loss 0.6325",
        "lr 3.00e-04",
        "restarts 1",
    ):
        assert part in full
    assert re.search("[▁▂▃▄▅▆▇█]{12}", full)
    for width in (200, 120, 100, 80, 60, 40):
        line = render_status(fields, width, colour=False)
        assert cells(line) <= width
        if width >= 40:
            assert "step 40/1000" in line and "eta " in line and "loss 0.6325" in line, (width, line)
    at_80 = render_status(fields, 80, colour=False)
    assert "lr " not in at_80 and "train" not in at_80  # the least useful go first
    assert "restarts 1" in render_status(fields, 100, colour=False)
    assert cells(render_status(fields, 20, colour=False)) <= 20  # cut, never wider


def test_fit_drops_the_lowest_rank_and_the_rightmost_among_equals() -> None:
    from trainwire.cli.status_line import Field

    fields = [Field("keep"), Field("a", 2), Field("b", 3), Field("c", 2), Field("must")]
    assert [f.text for f in fit(fields, 14)] == ["keep", "a", "b", "must"]
    assert [f.text for f in fit(fields, 12)] == ["keep", "b", "must"]
    assert [f.text for f in fit(fields, 3)] == ["keep", "must"]


def test_printable_escapes_what_drives_a_terminal() -> None:
    assert printable("loss é 損失 ▁█") == "loss é 損失 ▁█"
    assert printable("a\x1b[2Jb\x07\x9b\u202e\n") == "a\\x1b[2Jb\\x07\\x9b\\u202e\\x0a"


def run_in_terminal(arguments: list[str], *, columns: int, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run `trainwire ARGUMENTS` with its stdout on a pseudo-terminal; return the exit code and what it drew."""
    leader, follower = pty.openpty()
    environment = {name: value for name, value in os.environ.items() if name != "NO_COLOR"}
    environment.update({"COLUMNS": str(columns), "LINES": "24", **(env or {})})
    child = subprocess.Popen(
        [sys.executable, "-m", "trainwire", *arguments],
        stdout=follower,
        stderr=follower,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        env=environment,
    )
    os.close(follower)
    drawn = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    return child.wait(timeout=60), drawn.decode("utf-8")


def status_lines(drawn: str) -> list[str]:
    """Every status line drawn, in order (the terminal turned each "\\n" into "\\r\\n")."""
    segments = re.split(r"\n|\x1b\[\d+A|\r\x1b\[J", drawn.replace("\r\n", "\n"))
    return [segment for segment in segments if "eta " in segment]


@pytest.mark.parametrize("colour", [True, False])
def test_tail_on_a_terminal_draws_one_fitting_line_per_run(tmp_path: Path, colour: bool) -> None:
    write_run(tmp_path / "alpha", "alpha", steps=30, finish=False)  # died: stale long ago
    write_run(tmp_path / "beta", "beta", steps=20, finish=False)
    code, drawn = run_in_terminal(
        ["tail", "--follow", "--timeout", "1", str(tmp_path)], columns=80, env=None if colour else {"NO_COLOR": "1"}
    )
    assert code == 5, drawn
    lines = status_lines(drawn)[-2:]
    assert len(lines) == 2, drawn
    assert SGR.sub("", lines[0]).startswith("[alpha] stale") and SGR.sub("", lines[1]).startswith("[beta] stale")
    for line in lines:
        plain = SGR.sub("", line)
        assert cells(plain) <= 79, plain
        assert re.search(r"step \d+/1000", plain) and "eta " in plain and "loss " in plain
    assert ("\x1b[" in lines[0] and "m" in lines[0]) == colour
    assert ("\x1b[33mstale\x1b[0m" in drawn) == colour
    assert "\x1b[1A" in drawn  # two lines: back up one line before each redraw
    final = SGR.sub("", drawn.replace("\r\n", "\n").split("\r\x1b[J")[-1]).splitlines()
    assert [line.split(":")[0] for line in final if line] == ["[alpha] stale", "[beta] stale"]


def test_tail_on_a_wide_terminal_shows_rate_elapsed_and_the_loss_trend(tmp_path: Path) -> None:
    write_run(tmp_path / "run", "wide", steps=30, finish=False)
    code, drawn = run_in_terminal(["tail", "--follow", "--timeout", "1", str(tmp_path / "run")], columns=200)
    assert code == 5
    line = SGR.sub("", status_lines(drawn)[-1])
    assert re.search(r"elapsed \S+ .*eta \S+ 2 steps/s loss 0\.7303 [▁▂▃▄▅▆▇█]{12} lr 3\.00e-04 restarts 1", line), line
