"""`trainwire tail` on contract 1.1 streams: trials, per-item progress, cycles, rollbacks, stop criteria."""

from __future__ import annotations

import io

from trainwire.cli.status_line import RunTrend, render_status, status_fields
from trainwire.cli.tail import tail
from trainwire.conformance.paths import cases_dir
from trainwire.reader.state import StreamReader


def golden(case: str) -> bytes:
    return (cases_dir() / case / "stream.ndjson").read_bytes()


def status_line_after(case: str, lines: int, width: int) -> str:
    """The status line of the case's run once its first `lines` lines are read."""
    reader = StreamReader()
    reader.feed(b"".join(golden(case).splitlines(keepends=True)[:lines]))
    (run,) = reader.runs
    return render_status(status_fields(run, RunTrend(), "running", 0, unicode=False), width, colour=False)


def plain_tail(case: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = tail(cases_dir() / case / "stream.ndjson", out=out, err=io.StringIO(), tty=False)
    return code, out.getvalue().splitlines()


def test_the_status_line_shows_the_trial_of_the_search() -> None:
    wide = status_line_after("sweep-restart-in-trial", 9, 120)
    assert wide == "[sweep] running trial 2/3, best 1.2 (trial 1) [#############.......] 67% step 2/3 eta 1.0s loss 1.6"
    # on a narrow terminal the trial stays while the run id, the status and the bar go
    assert (
        status_line_after("sweep-restart-in-trial", 9, 60) == "trial 2/3, best 1.2 (trial 1) step 2/3 eta 1.0s loss 1.6"
    )
    assert (
        status_line_after("sweep-restart-in-trial", 5, 60) == "[sweep] trial 1/3 100% step 3/3 eta 0.0s loss 1.2"
    )  # no best yet


def test_the_status_line_shows_per_item_progress_instead_of_the_bare_phase_and_keeps_it_when_narrow() -> None:
    wide = status_line_after("eval-items", 22, 120)
    assert wide == "[eval-items] running predict 1,200/5,000 items, ETA 9.5s"
    assert status_line_after("eval-items", 22, 40) == "predict 1,200/5,000 items, ETA 9.5s"


def test_the_status_line_shows_the_cycle() -> None:
    assert status_line_after("cycles", 4, 120) == "[cycles] running search cycle 2 of 5"
    assert status_line_after("cycles", 5, 120) == "[cycles] running cycle 2 of 5"  # between two cycles


def test_plain_lines_say_trials_items_cycles_rollbacks_and_criteria() -> None:
    _, sweep = plain_tail("sweep-restart-in-trial")
    assert "[sweep] trial 2: restarted (oom): attempt 2 from step 1 (was at 2, batch size 32 -> 16)" in sweep
    assert "[sweep] trial 3 pruned in 1.0s, rejected" in sweep
    assert sweep[-1] == "[sweep] succeeded: step 1/3, 9.0s, best loss 0.9 (trial 2), lr=0.01, 1 restart(s)"
    _, items = plain_tail("eval-items")
    assert "[eval-items] eval 5,000/5,000 items, ETA 0.0s" in items
    # the prediction left open is ended by the run's end (writer rule 11): its count comes before
    assert items[-4:] == [
        "[eval-items] predict 1,200/5,000 items, ETA 9.5s",
        "[eval-items] phase predict interrupted in 3.0s",
        "[eval-items] run finished: interrupted in 15.5s",
        "[eval-items] interrupted: 15.5s",
    ]
    _, cycles = plain_tail("cycles")
    assert "[cycles] phase search started (cycle 3 of 5)" in cycles
    _, rollback = plain_tail("rollback-to-checkpoint")
    assert "[rollback] rolled back from step 6 to step 4 (ckpt/step-4): loss diverged" in rollback


def test_tail_exits_with_the_hosts_own_code_and_says_so() -> None:
    code, lines = plain_tail("stop-for-criterion")
    assert code == 6
    assert "stop requested (api), criterion met: loss > 10 after step 500" in lines[-3]
    assert lines[-1].endswith("stopped for: loss > 10 after step 500, the host's exit code 6")
