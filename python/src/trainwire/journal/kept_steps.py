"""Every step a run logged: a stream's lines with each run's kept steps (its journal's
`steps.jsonl`, the steps the throttle left out of the stream) put back in their place.

Each kept step comes just before the first line of its run whose `seq` is past its `after`
(so after the line it names, in its own order); `flush()` gives the ones after the last
line read (a run killed mid-way: the steps it logged after its last stream line). Every
consumer of "every step" (the exports, `tail`, `runs`, `diff`, `plot`, the dashboard's
opening) reads them here.

Each step file is read as hostile (`journal.step_file`, the rule the writer's journal
puts them back by too); a record naming a line the run never wrote is left out at the end:
a journal missing or from another run costs nothing but its steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from trainwire.contract.files import read_file
from trainwire.contract.layout import STEPS_FILE, run_journal_dir
from trainwire.journal.step_file import KeptSteps, Report
from trainwire.lines.state_fold import RunState, fold_kept_step

__all__ = [
    "VIEW_TAIL_BYTES",
    "KeptStepsMerge",
    "LineReader",
    "every_line",
    "fold_latest_kept_steps",
    "with_kept_steps",
]

#: how much of a step file's end a view reads for where a run is (its latest kept steps)
VIEW_TAIL_BYTES = 64 * 1024
#: the events after which a kept step no longer says where the run is
_STEP_SETTING = frozenset({"train.step", "train.restarted", "train.rolled_back"})

if TYPE_CHECKING:
    from trainwire.lines.decoder import Events


class LineReader(Protocol):
    """What picks a stream's valid lines by the readers' rules (`reader.state.StreamReader`)."""

    def feed(self, chunk: bytes) -> Events: ...

    def finish(self) -> None: ...


class KeptStepsMerge:
    """The lines of a stream with every run's kept steps put back, chunk after chunk."""

    def __init__(
        self,
        directory: Path,
        *,
        offsets: Mapping[str, int] | None = None,
        last_seqs: Mapping[str, int] | None = None,
        tail_bytes: int | None = None,
        within: Path | None = None,
        report: Report | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        """`offsets`: where each run's step file was read to (else from its start, or its
        last `tail_bytes`); `last_seqs`: the last line of each run read before (a resumed read);
        `cancelled`: asked before each chunk of a step file is read (`ReadCancelled` once true)."""
        self.directory = directory
        self._offsets = dict(offsets or {})
        self._tail_bytes = tail_bytes
        self._within = within
        self._report = report
        self._cancelled = cancelled
        self._runs: dict[str, KeptSteps] = {}
        self._last_seq: dict[str, int] = dict(last_seqs or {})

    def merge(self, lines: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """`lines` (a stream's validated lines, in order) with each kept step just before
        the first line of its run past it. Each step file read to its end is looked at again
        once a call: records appended meanwhile come in a later call (or `flush()`)."""
        self._look_again()
        for line in lines:
            run_id, seq = line.get("run_id"), line.get("seq")
            if isinstance(run_id, str) and type(seq) is int:
                yield from self._steps(run_id).before(seq)
                self._last_seq[run_id] = seq
            yield line

    def flush(self) -> list[dict[str, Any]]:
        """The kept steps after the last line read of each run, in the order of the runs."""
        self._look_again()
        return [line for run_id, seq in self._last_seq.items() for line in self._steps(run_id).through(seq)]

    def finish(self) -> list[dict[str, Any]]:
        """`flush()`, then every record that named a line the run never wrote is left out."""
        flushed = self.flush()
        for steps in self._runs.values():
            steps.left_over()
        return flushed

    def offsets(self) -> dict[str, int]:
        """The bytes of each run's step file handed out: where a later merge goes on."""
        return {**self._offsets, **{run_id: steps.offset for run_id, steps in self._runs.items()}}

    def _look_again(self) -> None:
        for steps in self._runs.values():
            steps.look_again()

    def _steps(self, run_id: str) -> KeptSteps:
        steps = self._runs.get(run_id)
        if steps is None:
            path = run_journal_dir(self.directory, run_id) / STEPS_FILE
            steps = self._runs[run_id] = KeptSteps(
                path,
                run_id,
                offset=self._offsets.get(run_id, 0),
                tail_bytes=None if run_id in self._offsets else self._tail_bytes,
                within=self._within,
                report=self._report,
                cancelled=self._cancelled,
            )
        return steps


def with_kept_steps(
    lines: Iterable[dict[str, Any]], directory: Path, *, within: Path | None = None, report: Report | None = None
) -> Iterator[dict[str, Any]]:
    """Every line of a whole stream read at once (`lines`, of the stream in `directory`) with
    every kept step in its place, the ones after each run's last line at the end."""
    merge = KeptStepsMerge(directory, within=within, report=report)
    yield from merge.merge(lines)
    yield from merge.finish()


def every_line(stream: Path, reader: LineReader, *, report: Report | None = None) -> Iterator[dict[str, Any]]:
    """The valid lines of the whole stream file `stream` (as `reader`, fresh, folds them) with
    every run's kept steps in place: every step the runs logged."""
    merge = KeptStepsMerge(stream.parent, report=report)
    for chunk in read_file(stream):
        yield from merge.merge(reader.feed(chunk).dicts)  # the validated lines, no models built
    reader.finish()
    yield from merge.finish()


def fold_latest_kept_steps(runs: Mapping[str, RunState], merged: Iterable[dict[str, Any]]) -> None:
    """Folds into each run's state (already holding the stream lines of `merged`) its latest
    kept step of `merged` that no later step, restart or rollback of the stream overwrote:
    where the run is when it got past its last stream step (`lines.state_fold.fold_kept_step`)."""
    latest: dict[str, dict[str, Any]] = {}
    for line in merged:
        run_id = line["run_id"]
        if "seq" not in line:
            latest[run_id] = line
        elif line["event"] in _STEP_SETTING:
            latest.pop(run_id, None)
    for run_id, line in latest.items():
        run = runs.get(run_id)
        if run is not None and run.finished is None:
            fold_kept_step(run, line)
